# Shared ns-2.35 set-up for the side-by-side validation of sctpsim (see README.md).
#
# Two multihomed hosts, A (sender) and B (receiver), joined by two disjoint routed paths:
#
#        A_if0 ---- R1 ---- B_if0        path 1: 2 hops of `d1` each (primary)
#       /                        \
#   A_core                      B_core   (ns-2's multihoming: a core node per host)
#       \                        /
#        A_if1 ---- R2 ---- B_if1        path 2: 2 hops of `d2` each
#
# Every hop is a duplex link of rate `rate` with a DropTail queue of `qlimit` packets in each
# direction. A bulk transfer of `bytes` user bytes (Application/FTP "send", which ns-2's SCTP
# cuts into messages of MTU - IP - SCTP - DATA header = 1452 bytes) starts at 0.5 s.
#
# The helpers multihomed_host and configure_sctp_agent are shared with benches/peers.
#
# Usage (from a scenario script that has set the array `cfg`):
#   ns SCENARIO.tcl MODE SEED OUTDIR [RTXPOLICY]
#     MODE      sctp: Agent/SCTP (plain multihomed SCTP, new data to the primary)
#               cmt:  Agent/SCTP/CMT (Concurrent Multipath Transfer)
#     SEED      seed of the loss process (ignored when there is no random loss)
#     OUTDIR    where out.tr (packet trace) and agent.tr (the sender's counters) are written
#     RTXPOLICY CMT's eCmtRtxPolicy_ (0 ASAP, 1 SAME, 2 SSTHRESH, 3 LOSSRATE, 4 CWND);
#               default 2, RTX-SSTHRESH
#
# Parameter names and values follow ns-2.35's sctp/sctp.cc, sctp/sctp-cmt.{h,cc} and
# tcl/lib/ns-default.tcl (University of Delaware SCTP module).

proc usage {} {
    puts stderr "usage: ns SCENARIO.tcl sctp|cmt SEED OUTDIR \[RTXPOLICY\]"
    exit 2
}

# A multihomed host in ns-2's model: a core node, to which agents attach
# (multihome-attach-agent), and `nifs` interface nodes, one per address, to which links
# attach. Returns {core if0 if1 ...}.
proc multihomed_host {ns nifs} {
    set core [$ns node]
    set nodes [list $core]
    for {set i 0} {$i < $nifs} {incr i} {
        set iface [$ns node]
        $ns multihome-add-interface $core $iface
        lappend nodes $iface
    }
    return $nodes
}

# The SCTP parameters every scenario here shares, set on `agent` (see README.md's parameter
# mapping): MTU 1500 = IP 20 + SCTP common header 12 + DATA chunk 1468 (16-byte chunk header
# + 1452 user bytes), the ns-2 defaults, stated for clarity; initial cwnd 3 x 1468 bytes
# (RFC 9260 7.2.1 and RFC 4960 7.2.1: min(4 MTU, max(2 MTU, 4380)) = 4380, three full
# packets either way); RTO.Initial `rto_initial` (RFC 9260: 1 s, RFC 4960: 3 s), RTO.Min
# 1 s, RTO.Max 60 s; ssthresh = the receive window `rwnd`; Path.Max.Retrans 5,
# Association.Max.Retrans 10, HB.interval 30 s; a SACK after every 2nd DATA packet or
# 200 ms (ns-2: DELAYED_SACK_TRIGGER 2); Max.Burst 4; fast retransmissions to the same
# destination, timeout ones to an alternate (sctpsim's default retransmission policy,
# RFC 9260 6.4); CMT uses eCmtRtxPolicy_ instead.
proc configure_sctp_agent {agent rwnd rto_initial} {
    $agent set mtu_ 1500
    $agent set ipHeaderSize_ 20
    $agent set dataChunkSize_ 1468
    $agent set numOutStreams_ 1
    $agent set initialCwnd_ 3
    $agent set initialRto_ $rto_initial
    $agent set minRto_ 1.0
    $agent set maxRto_ 60.0
    $agent set initialSsthresh_ $rwnd
    $agent set initialRwnd_ $rwnd
    $agent set pathMaxRetrans_ 5
    $agent set associationMaxRetrans_ 10
    $agent set heartbeatInterval_ 30
    $agent set useDelayedSacks_ 1
    $agent set sackDelay_ 0.200
    $agent set useMaxBurst_ 1
    $agent set rtxToAlt_ 2
    $agent set fastRtxTrigger_ 3
}

proc run_scenario {} {
    global argv cfg
    if {[llength $argv] < 3 || [llength $argv] > 4} { usage }
    set mode [lindex $argv 0]
    set seed [lindex $argv 1]
    set outdir [lindex $argv 2]
    set rtxpolicy 2
    if {[llength $argv] == 4} { set rtxpolicy [lindex $argv 3] }
    if {$mode != "sctp" && $mode != "cmt"} { usage }
    if {[lsearch -exact {0 1 2 3 4} $rtxpolicy] < 0} { usage }

    # One trace line per chunk, with TSN, stream and SSN (ns-2 manual, "Tracing SCTP Dynamics").
    Trace set show_sctphdr_ 1

    set ns [new Simulator]
    set trace [open "$outdir/out.tr" w]
    $ns trace-all $trace

    # --- topology -----------------------------------------------------------------------
    lassign [multihomed_host $ns 2] a_core a_if0 a_if1
    lassign [multihomed_host $ns 2] b_core b_if0 b_if1

    set r1 [$ns node]
    set r2 [$ns node]

    set hops [list \
        [list $a_if0 $r1 $cfg(d1) 1] [list $r1 $b_if0 $cfg(d1) 1] \
        [list $a_if1 $r2 $cfg(d2) 2] [list $r2 $b_if1 $cfg(d2) 2]]
    foreach hop $hops {
        set n1 [lindex $hop 0]
        set n2 [lindex $hop 1]
        $ns duplex-link $n1 $n2 $cfg(rate) [lindex $hop 2] DropTail
        $ns queue-limit $n1 $n2 $cfg(qlimit)
        $ns queue-limit $n2 $n1 $cfg(qlimit)
    }

    # Random loss of each packet that crosses a path's first hop, in both directions, placed
    # after the queue (insert-linkloss), so a lost packet is traced as "+", "-" then "d".
    if {$cfg(loss) > 0} {
        # MRG32k3a with a fixed seed, one substream per replication: seeding ns-2's RNG with
        # small integers directly gives a first draw near 0 (seed 1: 0.0003), so every run
        # would lose its INIT.
        set rng [new RNG]
        $rng seed 12345
        for {set i 0} {$i < $seed} {incr i} { $rng next-substream }
        foreach pair [list [list $a_if0 $r1] [list $r1 $a_if0]] {
            set em [new ErrorModel]
            $em unit pkt
            $em set rate_ $cfg(loss)
            set rv [new RandomVariable/Uniform]
            $rv use-rng $rng
            $em ranvar $rv
            $em drop-target [new Agent/Null]
            $ns link-lossmodel $em [lindex $pair 0] [lindex $pair 1]
        }
    }

    # --- SCTP agents --------------------------------------------------------------------
    if {$mode == "cmt"} {
        set snd [new Agent/SCTP/CMT]
        set rcv [new Agent/SCTP/CMT]
    } else {
        set snd [new Agent/SCTP]
        set rcv [new Agent/SCTP]
    }
    $ns multihome-attach-agent $a_core $snd
    $ns multihome-attach-agent $b_core $rcv

    foreach agent [list $snd $rcv] {
        configure_sctp_agent $agent $cfg(rwnd) 1.0
    }
    if {$mode == "cmt"} {
        foreach agent [list $snd $rcv] {
            $agent set useCmtReordering_ 1 ; # SFR
            $agent set useCmtCwnd_ 1       ; # CUC
            $agent set useCmtDelAck_ 1     ; # DAC
            $agent set eCmtRtxPolicy_ $rtxpolicy ; # 0 ASAP, 1 SAME, 2 SSTHRESH, 3 LOSSRATE, 4 CWND
            $agent set useCmtPF_ 0         ; # CMT-PF off: no path fails here
        }
    }

    $ns connect $snd $rcv
    $snd set-primary-destination $b_if0

    # The sender's counters (fast retransmissions, timeouts per destination), printed at the
    # end: with trace_all_ set, "print" writes one line per destination.
    set agent_trace [open "$outdir/agent.tr" w]
    $snd set trace_all_ 1
    $snd attach $agent_trace

    set ftp [new Application/FTP]
    $ftp attach-agent $snd
    $ns at 0.5 "$ftp send $cfg(bytes)"

    # Node ids, for the trace parser.
    set ids [open "$outdir/nodes.txt" w]
    foreach {name node} [list a_if0 $a_if0 a_if1 $a_if1 b_if0 $b_if0 b_if1 $b_if1 r1 $r1 r2 $r2] {
        puts $ids "$name [$node id]"
    }
    puts $ids "bytes $cfg(bytes)"
    close $ids

    $ns at $cfg(end) "$snd print cwnd_"
    $ns at $cfg(end) "finish"
    proc finish {} "
        $ns flush-trace
        close $trace
        close $agent_trace
        exit 0
    "
    $ns run
}
