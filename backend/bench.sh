#!/bin/sh
echo "bench: not yet"
