# Scenario C (congestion loss, deterministic): the topology of scenario A with ns-2's default
# queues of 50 packets and a 1 MiB receive window, so slow start overflows the bottleneck
# queue and the sender recovers from a burst of drops by fast retransmission and timeouts;
# an 8,000,000-byte transfer. sctpsim counterpart: two-paths-droptail.toml.
# Run: ns two-paths-droptail.tcl sctp|cmt SEED OUTDIR [RTXPOLICY]
source [file join [file dirname [info script]] common.tcl]
array set cfg {
    rate   10Mb
    d1     5ms
    d2     10ms
    qlimit 50
    loss   0
    rwnd   1048576
    bytes  8000000
    end    120.0
}
run_scenario
