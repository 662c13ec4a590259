# Packaging: `cpack -G DEB` (run in the build directory) turns the install
# rules into ubtrace_<version>_<arch>.deb:
#   /usr/bin/ubtrace                           the CLI
#   /usr/lib/ubtrace/libubtrace_{agent,preload}.so   loaded into traced processes
#   /usr/share/ubtrace/scripts/*.bt            runbook tools
#   /usr/share/man/man8/ubtrace.8              the manual
# Depends comes from dpkg-shlibdeps over the packaged binaries, so it lists
# exactly the libraries they link (libbpf1, libdw1, libelf1, libzstd1,
# libzydis4.0, libstdc++6, ...).
#
# Included from the top CMakeLists.txt after every directory.

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME ubtrace)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR ubtrace)
set(CPACK_PACKAGE_CONTACT "ubtrace maintainers <ubtrace@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
  "run bpftrace scripts on user-space processes and CUDA kernels")
set(CPACK_PACKAGE_DESCRIPTION
  "ubtrace runs bpftrace scripts without the kernel's tracing machinery:
uprobe, uretprobe and usdt probes run inside the traced process (started
with -c or attached with -p) through inline hooks, and kernel/kernelret
probes run inside CUDA kernels on the GPU. Maps print as bpftrace prints
them. Runbook tools are installed in /usr/share/ubtrace/scripts.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The preload library needs the agent next to it (RUNPATH $ORIGIN).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS usr/lib/ubtrace)
# Recommended tools: man for the manual, and the CUDA driver is what GPU
# probes need (it is not in Debian main, so only suggested).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS man-db)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bpftrace, libcuda1")

# `ninja package_source`: the tree as git tracks it, never build folders
# (helpers and benchmarks keep several build-*/ next to the sources).
set(CPACK_SOURCE_GENERATOR TGZ)
set(CPACK_SOURCE_IGNORE_FILES "/\\\\.git/" "/build[^/]*/" "/\\\\.cache/" "~$")

include(CPack)
