"""Mappings: MAESTRO's ``.m`` format, named dataflow styles, jobs, and the compiler that turns
a mapping, a layer and an array into the tile schedule every model reads."""
