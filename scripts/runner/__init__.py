# SPDX-License-Identifier: GPL-2.0
"""runner - the project's harness in Python: the test VM's boot
(scripts/vm), make check's stages (scripts/check-*, scripts/lint), the
kernels and images the VM boots (scripts/test-kernel,
scripts/debian-kernel, scripts/initramfs, scripts/pyverbs-root), the
tools beside them (scripts/callgraph, scripts/wire-vectors, scripts/demo),
the runs outside make check (scripts/bench, scripts/coverage,
scripts/check-blktests) and the package and root-folder helpers they
all share.

  cli.py       scripts/vm's command line and environment, made a Boot
  boot.py      Boot, one boot declared as data, and its run: the overlay,
               QEMU under timeout(1), the console's copy
  judge.py     the verdict on a run's console, the gcov counts it carries
               and its line in make check's table of boots
  splats.py    the kernel's complaints that fail a run, and their finder
  console.py   the console's copy: escapes stripped, COMMAND's lines shown
  markers.py   the lines the guest's /init prints, section(), and a log
               file's lines read and written
  shell.py     the runner's messages, its children, its scripts' entry
  pkgs.py      the package lists and need_pkgs, which installs them
  paths.py     the cache folder, the test kernel's folders in it, a copy
               of the source tree, krwq's version
  rootfs.py    a guest root folder from the host's files: copy_to_root,
               elf_libs, merge_usr, and its newc cpio
  testkernel.py  scripts/test-kernel: the test kernel and its variants,
                 built once from Debian's linux-source-6.1 and cached
  initramfs.py scripts/initramfs: the cached base image of the VM
  pyverbsroot.py  scripts/pyverbs-root: rdma-core's test suite for the VM
  stage.py     what the stages share: Tally (their "ok:" and "FAILED:"
               lines, "PASSED FAILED"), the guest scripts' summary
               lines, and Vm, one run of scripts/vm declared as data
  kunit.py     KUnit's results read back from a boot: KTAP out of the
               console, the kernel's kunit.py parser, one count per case;
               krwq_stress's rounds for the dose
  dose.py      make check's dose: the stages' figures, their minimum
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
  race.py      scripts/check-race: the KCSAN build and boot, KCSAN's
               reports sorted by whether krwq is in them
  hostile.py   scripts/check-hostile: hostile.sh's boot, krwq_faults
  trace.py     scripts/check-trace: trace.sh's boot
  fuzz.py      scripts/check-fuzz: libFuzzer on the core, on the host
  gtest.py     scripts/check-host: GoogleTest on the core, on the host
  debiankernel.py  scripts/debian-kernel: Debian's packaged kernel, laid
                   out as a test-kernel tree, and krwq.ko built for it
  callgraph.py scripts/callgraph: which file of module/ calls which, and
               whether they call each other in a circle (lint)
  wirevectors.py  scripts/wire-vectors: KUnit's ICRC vectors made again
                  from a capture of rdma_rxe's packets
  bench.py     scripts/bench (make bench): the host's Google Benchmark
               run, krwq.ko and krwq_bench.ko built in a copy for the
               bench kernel, its boots (guest-bench.sh per uverbs ABI,
               abi-bench.sh, guest-ulp.sh, wire-bench.sh) each a
               stage.Vm, check-hosts --bench, then bench/report.py
  coverage.py  scripts/coverage: the core's line and branch coverage on
               the host, krwq.ko's under the VM stages on the gcov
               kernel, and the reports read from lcov's tracefiles
               (summary.md, unreached.txt)
  blktests.py  scripts/check-blktests: blktests, the guest's tools and
               siw.ko for Debian's kernel, one boot, its table and count

The guest's /init is scripts/guest/init.sh; the run's values reach it in
/krwq/vm.env (boot.vm_env).  Standard library only.
"""
