"""The SimPy engine: a compiled tile schedule executed event by event on a hardware model."""
