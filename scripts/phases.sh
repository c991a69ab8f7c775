# Timed phases for .ci/run and scripts/test (sourced, not run).
#
#   phase NAME COMMAND [ARGS...]   runs COMMAND; when CI_PHASE_TIMES names a file, appends
#                                  "NAME<TAB>SECONDS<TAB>ok|failed" to it; answers COMMAND's status
#   phase_table                    prints the phases recorded so far as a table, with their total
#                                  and the machine's load, to stderr
#
# The file's variable is not named TASKBOX_…: the server refuses an environment variable of that
# prefix that it does not know, and the tests' servers inherit this one.
#
# So that a slow CI run says where its time went, and a fast one what to keep fast. Call
# `phase` as a statement of its own, never under `if`, `||` or `&&`: there bash ignores errexit
# in everything the command runs, and a failing first step would go unseen.

phase() {
    local name=$1
    shift
    echo "==> $name" >&2
    local t0=$SECONDS rc errexit=
    # In a subshell with errexit on, not under `||`: there bash ignores
    # errexit inside the command, and a function's failing first step would
    # go unseen behind a passing last one.
    case $- in *e*) errexit=1 ;; esac
    set +e
    (
        set -e
        "$@"
    )
    rc=$?
    [ -z "$errexit" ] || set -e
    if [ -n "${CI_PHASE_TIMES:-}" ]; then
        local verdict=ok
        [ "$rc" -eq 0 ] || verdict=failed
        printf '%s\t%s\t%s\n' "$name" "$((SECONDS - t0))" "$verdict" >>"$CI_PHASE_TIMES"
    fi
    return "$rc"
}

phase_table() {
    [ -n "${CI_PHASE_TIMES:-}" ] && [ -s "$CI_PHASE_TIMES" ] || return 0
    {
        echo
        printf "%-80s  %7s  %s\n" phase seconds result
        printf "%-80s  %7s  %s\n" "$(printf "%080d" 0 | tr 0 -)" ------- ------
        awk -F'\t' '{ printf "%-80s  %7d  %s\n", $1, $2, $3; total += $2 }
                    END { printf "%-80s  %7d\n", "sum of the phases (some run side by side)", total }' "$CI_PHASE_TIMES"
        printf "%-80s  %7d\n" "wall clock" "$SECONDS"
        echo "load average (1, 5, 15 min) at the end: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown); cores: $(nproc 2>/dev/null || echo unknown)"
    } >&2
}
