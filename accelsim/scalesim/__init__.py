"""SCALE-Sim inputs and parity.

Readers for SCALE-Sim's own files (``.cfg``, topology CSV in convolution or GEMM form,
``COMPUTE_REPORT.csv``), their translation into our systolic hardware spec and mappings, and
the parity run against the real ``scalesim`` package (an optional dependency).
"""
