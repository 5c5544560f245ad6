"""Systems of several sub-accelerators sharing one off-chip channel: specs, workloads, schedulers and the shared-clock run (`accelsim multicore`)."""
