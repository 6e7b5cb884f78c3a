#!/bin/sh
exec python3 train.py "$@"
