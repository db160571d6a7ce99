# Scenario A (lossless): two disjoint 10 Mbit/s paths of 20 ms and 40 ms round-trip
# propagation delay, queues of 200 packets (longer than any window here, so no packet is
# ever dropped), receive window 256 KiB, a 4,000,000-byte transfer. sctpsim counterpart:
# two-paths-lossless.toml. Run: ns two-paths-lossless.tcl sctp|cmt SEED OUTDIR [RTXPOLICY]
source [file join [file dirname [info script]] common.tcl]
array set cfg {
    rate   10Mb
    d1     5ms
    d2     10ms
    qlimit 200
    loss   0
    rwnd   262144
    bytes  4000000
    end    60.0
}
run_scenario
