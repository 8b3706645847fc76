"""Support code for the test suite and the benchmarks (the outermost layer: it may import any other, none
imports it): synthetic SO-101 bags, tiny LeRobot policies and VLAs made locally, two network namespaces
joined by a veth pair, a `ros2 param`-like probe, process-group checks.

Shipped with the package so that `bench/*.py` and `tests/` import it the same way, without path edits.
Nothing here runs in a product code path.
"""
