# SPDX-License-Identifier: GPL-2.0
"""runner - the test VM's boot (scripts/vm), in Python.

  splats.py    the kernel's complaints that fail a run, and their finder
  markers.py   the lines the guest's /init prints, and section()
  shell.py     what scripts/lib.sh defines, asked of bash (one definition)

Standard library only.
"""
