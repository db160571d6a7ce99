# ns-2 start-up alone: the interpreter and its Tcl library load, then exit (run.py times it
# against `sctpsim --version`).
exit 0
