"""blkbench: the dom0/domU benchmark matrix of blkbackd (see blkbench(1))."""
