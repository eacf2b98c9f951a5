"""The former name of :mod:`accelsched.formulations.ra_tree_tiles` (SET's S-Cut tile allocation), re-exported
until its last importer outside the RA-tree area moves to the new name; then this module is deleted."""

from accelsched.formulations.ra_tree_tiles import (
    TileAllocation,
    TileAllocationIlp,
    allocate_tiles,
    allocation_bottleneck,
    proportional_tables,
    published_allocation,
    threshold_allocation,
)

__all__ = [
    "TileAllocation",
    "TileAllocationIlp",
    "allocate_tiles",
    "allocation_bottleneck",
    "proportional_tables",
    "published_allocation",
    "threshold_allocation",
]
