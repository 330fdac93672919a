#!/usr/bin/env bash
# Installs a ucudnn build tree to a temporary prefix and builds an application against it out
# of tree, as an embedding application would, then runs it on the tiny CNN at batch 2:
#   - the headers installed are exactly those include/ucudnn/ucudnn.h includes (per the compiler);
#   - tests/install/CMakeLists.txt: find_package(ucudnn) + ucudnn::ucudnn, on a copy of
#     tools/examples/embed_example.cc;
#   - the same source with the flags of `pkg-config --cflags --libs ucudnn`;
#   - the installed command line (bin/ucudnn info).
# Its temporary folders are removed on exit.
#
#   install_test.sh CMAKE BUILD_DIR SOURCE_DIR CXX_COMPILER
set -euo pipefail
if (($# != 4)); then
  echo "usage: install_test.sh CMAKE BUILD_DIR SOURCE_DIR CXX_COMPILER" >&2
  exit 2
fi
cmake=$1 build=$2 source=$3 cxx=$4
model=$source/models/tiny/tiny_cnn/model.onnx
expected_output='output float32[2, 5]'

work=$(mktemp -d "${TMPDIR:-/tmp}/ucudnn-install-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

fail() {
  echo "install_test: FAIL: $*" >&2
  exit 1
}
# Runs a command with its output in a log, shown only when it fails.
quiet() {
  if ! "$@" >"$work/log" 2>&1; then
    cat "$work/log" >&2
    fail "$*"
  fi
}
# Runs the example built at $1 on the tiny CNN and checks its first output's shape.
check_example() {
  local out
  out=$("$1" "$model" 2 2>&1) || { echo "$out" >&2; fail "$1 exited non-zero"; }
  echo "$out"
  grep -qF "$expected_output" <<<"$out" || fail "$1 did not print '$expected_output'"
}

echo "== cmake --install $build --prefix $prefix"
quiet "$cmake" --install "$build" --prefix "$prefix"

echo "== installed files"
[[ -x $prefix/bin/ucudnn ]] || fail "no executable bin/ucudnn"
config=$(find "$prefix" -path '*/cmake/ucudnn/ucudnnConfig.cmake')
[[ -n $config && -f $(dirname "$config")/ucudnnConfigVersion.cmake ]] ||
  fail "no <libdir>/cmake/ucudnn/ucudnnConfig.cmake and ucudnnConfigVersion.cmake"
pc=$(find "$prefix" -path '*/pkgconfig/ucudnn.pc')
[[ -n $pc ]] || fail "no <libdir>/pkgconfig/ucudnn.pc"
(cd "$prefix" && find . -type f | sed 's#^\./#  #' | sort)

echo "== installed headers = what include/ucudnn/ucudnn.h includes"
# Paths as the compiler found them: include/X installs as include/X, the rest (runtime/core/...)
# as include/<path>. System headers are left out by -MM.
needed=$(cd "$source" && "$cxx" -std=c++20 -MM -MT deps -I. -Iinclude include/ucudnn/ucudnn.h |
           sed -e 's/^deps://' -e 's/\\$//' | tr ' ' '\n' | sed -e '/^$/d' -e 's#^\./##' -e 's#^include/##' | sort -u)
installed=$(cd "$prefix/include" && find . -type f | sed 's#^\./##' | sort)
if [[ $needed != "$installed" ]]; then
  diff <(echo "$needed") <(echo "$installed") >&2 || true
  fail "installed headers (>) differ from those include/ucudnn/ucudnn.h needs (<): see cmake/UcudnnInstall.cmake"
fi
echo "  ${installed//$'\n'/$'\n'  }"

# The application's source, away from ucudnn's tree.
mkdir "$work/app"
cp "$source/tools/examples/embed_example.cc" "$work/app/"

echo "== find_package(ucudnn): configure and build tests/install"
quiet "$cmake" -S "$source/tests/install" -B "$work/consumer" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF \
  -DUCUDNN_EXAMPLE_SOURCE="$work/app/embed_example.cc"
found=$(sed -n 's/^ucudnn_DIR:PATH=//p' "$work/consumer/CMakeCache.txt")
[[ $found == "$prefix"/* ]] || fail "find_package(ucudnn) found $found, not the package under $prefix"
quiet "$cmake" --build "$work/consumer"
check_example "$work/consumer/embed_example"

echo "== pkg-config --cflags --libs ucudnn"
PKG_CONFIG_PATH=$(dirname "$pc")
export PKG_CONFIG_PATH
flags=$(pkg-config --cflags --libs ucudnn) || fail "pkg-config --cflags --libs ucudnn"
echo "  $flags"
# shellcheck disable=SC2086  # the flags are words
quiet "$cxx" -std=c++20 "$work/app/embed_example.cc" -o "$work/embed_example_pc" $flags
# Shared libraries outside the loader's path (CUDA's, say) are found where -L says.
lib_dirs=$(pkg-config --libs-only-L ucudnn | sed -e 's/^ *-L//' -e 's/ *-L/:/g' -e 's/ *$//')
LD_LIBRARY_PATH=$lib_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} check_example "$work/embed_example_pc"

echo "== bin/ucudnn info"
quiet "$prefix/bin/ucudnn" info "$model"

echo "install_test: OK"
