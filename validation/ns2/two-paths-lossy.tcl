# Scenario B (random loss, small receive window): the topology of scenario A with 1 % random
# loss of every packet on the first hop of path 1 (the primary), in both directions, and a
# 64 KiB receive window; queues of 50 packets (ns-2's default); an 8,000,000-byte transfer.
# sctpsim counterpart: two-paths-lossy.toml. Run: ns two-paths-lossy.tcl sctp|cmt SEED OUTDIR [RTXPOLICY]
source [file join [file dirname [info script]] common.tcl]
array set cfg {
    rate   10Mb
    d1     5ms
    d2     10ms
    qlimit 50
    loss   0.01
    rwnd   65536
    bytes  8000000
    end    120.0
}
run_scenario
