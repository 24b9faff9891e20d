#!/usr/bin/env bash
# Packs dtbench's CUDA build into a kit that runs on a bare GPU machine (one with the NVIDIA driver,
# the CUDA toolkit and the NVIDIA libraries as Python packages, and none of dtbench's other
# dependencies), and the script that checks the whole GPU path there.
#
#   scripts/gpu-kit.sh [--build DIR] [--no-archive] OUT
#
# OUT/kit.tar.xz   the kit: dtbench, the `gpu` tests and Open MPI's launcher, every library they load
#                  except CUDA's (glibc and its loader included), Open MPI's and PMIx's plugins and
#                  help files, and bin/run, which starts a program through the kit's loader with the
#                  kit's libraries first and the machine's CUDA libraries (found when it runs) after
# OUT/run-gpu-checks.sh   run there, from the repository's root: unpacks the kit, runs the checks,
#                  writes everything under $OUT (scripts/run-gpu-checks.sh)
#
# --build DIR   the CUDA build (default build/; configured with the toolkit, DTBENCH_CUDA=AUTO|ON)
# --no-archive  leave the kit as the folder OUT/kit instead of packing it (the CTest test uses it)
# DTBENCH_KIT_XZ: xz's level for the archive (default 6: about 20 MB in 30 s on 2 cores; 0 is fast)
#
# The device machine's working tree must stay under 64 MiB: the archive is about 20 MB.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$root/build"
archive=1
out=""
usage() { sed -n '2,20s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) build="$(cd "$2" && pwd)"; shift 2 ;;
    --no-archive) archive=0; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "gpu-kit.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
    *) [[ -z $out ]] || { echo "gpu-kit.sh: one OUT folder, got $out and $1" >&2; exit 2; }; out="$1"; shift ;;
  esac
done
[[ -n $out ]] || { usage >&2; exit 2; }

fail() { echo "gpu-kit.sh: $*" >&2; exit 1; }
trap 'echo "gpu-kit.sh: line $LINENO failed (exit $?): $BASH_COMMAND" >&2' ERR

binaries=("$build/dtbench" "$build/tests/test_gpu_layers" "$build/tests/test_gpu_training" "$build/tests/test_cublas_library")
for binary in "${binaries[@]}"; do
  [[ -x $binary ]] || fail "no $binary: build first (cmake --build $build)"
done
[[ $(ldd "$build/dtbench") == *libcudart.so* ]] ||
  fail "$build/dtbench is not a CUDA build (it does not load libcudart): configure $build where the CUDA toolkit, cuDNN and NCCL are found (-DDTBENCH_CUDA=ON says what is missing)"
orterun="$(readlink -f "$(command -v mpirun)")" || fail "no mpirun on the PATH (Open MPI)"
ompi_path() { ompi_info --path "$1" --parsable | cut -d: -f3; }
ompi_plugins="$(ompi_path pkglibdir)"
ompi_data="$(ompi_path pkgdatadir)"
# PMIx's plugins: the folder named pmix beside the libpmix that Open MPI's PMIx component loads.
# (awk reads to the end: leaving at the first match let ldd die of SIGPIPE when it wrote after, which
# pipefail made a silent exit of this script, now and then on a busy machine)
pmix_library="$(ldd "$ompi_plugins"/mca_pmix_*.so 2>/dev/null | awk '/libpmix\.so/ && !found { print $3; found = 1 }')"
pmix_plugins=""
[[ -z $pmix_library ]] || pmix_plugins="$(dirname "$(readlink -f "$pmix_library")")/pmix"

mkdir -p "$out"
out="$(cd "$out" && pwd)"
kit="$out/kit"
rm -rf "$kit"
mkdir -p "$kit/bin/programs" "$kit/lib" "$kit/root/hwloc-plugins"

# A file copied to the same absolute path under kit/root (Open MPI finds its plugins and help files
# under OPAL_PREFIX, which bin/run points at kit/root/usr).
mirror() { mkdir -p "$kit/root$(dirname "$1")"; cp -a "$1" "$kit/root$1"; }

cp -L "${binaries[@]}" "$orterun" "$kit/bin/programs/"
mirror "$ompi_plugins"
mirror "$ompi_data"
mirror /etc/openmpi/openmpi-mca-params.conf
if [[ -n $pmix_plugins && -d $pmix_plugins ]]; then
  mirror "$pmix_plugins"
  echo "root$pmix_plugins" >"$kit/root/pmix-plugins"  # relative to the kit, which may move
fi
[[ ! -d /usr/share/pmix ]] || mirror /usr/share/pmix

# Every library the programs and plugins load, except CUDA's and the driver's (the GPU machine's
# own, found when bin/run starts). The loader is glibc's, so the whole C library travels too.
is_cuda() { [[ $1 =~ ^lib(cuda|cudart|cublas|cublasLt|cudnn|nccl|nvidia-|nvrtc|nvJitLink)[._a-zA-Z0-9-]*\.so ]]; }
plugins=()
mapfile -t plugins < <(find "$kit/root" -name '*.so' -type f)
declare -A copied=()
while read -r name path; do
  [[ -n $path && $path == /* ]] || continue
  is_cuda "$name" && continue
  [[ -n ${copied[$name]:-} ]] && continue
  cp -L "$path" "$kit/lib/$name"
  copied[$name]="$path"
done < <(for file in "${binaries[@]}" "$orterun" "${plugins[@]}"; do
           ldd "$file" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 } $1 ~ /^\/.*ld-linux/ { print "ld-linux-x86-64.so.2", $1 }'
         done)
[[ -f $kit/lib/ld-linux-x86-64.so.2 ]] || fail "ldd named no loader for $build/dtbench"
missing="$(for file in "${binaries[@]}" "$orterun"; do ldd "$file"; done | awk '/not found/ { print $1 }' | sort -u |
           while read -r name; do is_cuda "$name" || echo "$name"; done)"
[[ -z $missing ]] || fail "libraries not found on this machine: $missing"

install -m 0755 "$root/scripts/gpu-kit/run" "$kit/bin/run"
install -m 0755 "$root/scripts/gpu-kit/cuda-library-path" "$kit/bin/cuda-library-path"
for program in "$kit"/bin/programs/*; do
  name="$(basename "$program")"
  [[ $name == orterun ]] && name=mpirun
  printf '#!/bin/sh\nexec "$(dirname "$0")/run" "$(dirname "$0")/programs/%s" "$@"\n' "$(basename "$program")" \
    >"$kit/bin/$name"
  chmod 0755 "$kit/bin/$name"
done
{
  echo "dtbench GPU kit"
  echo "commit: $(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n)"
  echo "programs: $(cd "$kit/bin/programs" && echo *)"
  echo "libraries (from this machine):"
  for name in "${!copied[@]}"; do echo "  $name ${copied[$name]}"; done | sort
  # cuBLAS is opened when a GPU step starts (core/cuda/cublas_library.h), so ldd does not name it:
  # the same major version as the runtime's.
  cudart="$(ldd "$build/dtbench" | awk '$1 ~ /^libcudart\.so\./ && !found { print $1; found = 1 }')"
  echo "CUDA libraries the GPU machine must provide: $(ldd "$build/dtbench" | awk '{ print $1 }' |
    while read -r name; do is_cuda "$name" && echo -n "$name "; done)libcublas.so.${cudart##*.so.} (opened at a GPU step's start)"
} >"$kit/MANIFEST"

install -m 0755 "$root/scripts/run-gpu-checks.sh" "$out/run-gpu-checks.sh"
if [[ $archive == 1 ]]; then
  tar -C "$out" -cf - kit | xz -T0 "-${DTBENCH_KIT_XZ:-6}" >"$out/kit.tar.xz"
  rm -rf "$kit"
  echo "gpu-kit.sh: $out/kit.tar.xz ($(du -h "$out/kit.tar.xz" | cut -f1)), $out/run-gpu-checks.sh"
else
  echo "gpu-kit.sh: $kit ($(du -sh "$kit" | cut -f1)), $out/run-gpu-checks.sh"
fi
