"""`python3 -m ucudnn ARGS...` runs the `ucudnn` command line with ARGS (`python3 -m ucudnn run model.onnx`).

The command line is a program of its own (tools/ucudnn), run in place of this process so that its
output, exit status and Ctrl-C behave as when it is run directly. Which one: $UCUDNN_CLI when set, else
the one built or installed with this package (_cli_path.py, written by CMake), else `ucudnn` on PATH.
"""

import os
import shutil
import sys


def find_cli():
    """The path of the `ucudnn` program, or None."""
    candidates = [os.environ.get("UCUDNN_CLI")]
    try:
        from ucudnn._cli_path import CLI
        candidates.append(CLI)
    except ImportError:
        pass
    candidates.append(shutil.which("ucudnn"))
    for path in candidates:
        if path and os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def main():
    cli = find_cli()
    if cli is None:
        sys.stderr.write("python3 -m ucudnn: the `ucudnn` command line was not found (set UCUDNN_CLI, or build "
                         "the ucudnn_cli target, or put `ucudnn` on PATH)\n")
        return 127
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(cli, [cli] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
