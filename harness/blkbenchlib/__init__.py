# SPDX-License-Identifier: GPL-2.0-or-later
"""blkbench: the dom0/domU benchmark matrix of blkbackd (see blkbench(1))."""
