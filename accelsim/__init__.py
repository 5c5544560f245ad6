"""accelsim: a cycle-level, discrete-event simulator of spatial DNN accelerators."""

__version__ = "0.1.0"
