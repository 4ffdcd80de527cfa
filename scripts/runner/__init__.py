# SPDX-License-Identifier: GPL-2.0
"""runner - the test VM's boot (scripts/vm) and make check's stages
(scripts/check-*), in Python.

  cli.py       scripts/vm's command line and environment, made a Boot
  boot.py      Boot, one boot declared as data, and its run: the overlay,
               QEMU under timeout(1), the console's copy
  judge.py     the verdict on a run's console, the gcov counts it carries
               and its line in make check's table of boots
  splats.py    the kernel's complaints that fail a run, and their finder
  console.py   the console's copy: escapes stripped, COMMAND's lines shown
  markers.py   the lines the guest's /init prints, and section()
  shell.py     what scripts/lib.sh defines, asked of bash (one definition)
  vmstages.py  scripts/check-vm's groups: each one boot declared as data
               (its guest parts, its options), and the checks read back
  debian.py    scripts/check-debian: DKMS for Debian's kernel, then one
               boot of it running the guest programs, declared as data
  hosts.py     scripts/check-hosts: two boots of Debian's kernel linked
               by QEMU's socket netdev
  builds.py    scripts/check-builds: the module's builds and build guards
  kbuild.py    a Kbuild build, its log's warnings, DKMS on private trees
  lint.py      scripts/lint: checkpatch, sparse, kernel-doc, the call
               graph, the clang tools, shellcheck, pyflakes and doctests

The guest's /init is scripts/guest/init.sh; the run's values reach it in
/krwq/vm.env (boot.vm_env).  Standard library only.
"""
