# The failover-tuning scenario (python/sctpsim/studies/failover-tuning/wifi-lte.toml) in
# ns-2.35: a multihomed client uploads to a multihomed server over Wi-Fi (primary) and LTE,
# each access network one asymmetric link followed by its own 100 Mbit/s wired link; 50-packet
# DropTail queues everywhere; RFC 4960 SCTP parameters; bulk upload from 0.5 s to 300 s. See
# README.md for the parameter mapping.
#
#   client_if0 --wifi-- ap_wifi --wired-1-- server_if0
#   client_if1 --lte--- ap_lte  --wired-2-- server_if1
#
# Usage: ns wifi-lte.tcl failover|stable OUTDIR [trace]
#   failover  the Wi-Fi link goes down at 100 s (sctpsim: iface-down of client/wifi)
#   stable    no failure
#   trace     write OUTDIR/out.tr (the data-direction links: client -> access point -> server),
#             OUTDIR/agent.tr (the sender's counters), OUTDIR/nodes.txt (node ids),
#             OUTDIR/timeouts.txt (time and count of each T3 timeout from 99 s on) and
#             OUTDIR/drops.txt (drops on the reverse links); without it nothing is written,
#             as in a timing run.
# Prints "sim-start US" just before `$ns run` and "sim-end US" when the run ends
# (wall-clock microseconds), so a harness can time the simulation alone.
source [file join [file dirname [info script]] .. .. validation ns2 common.tcl]

if {[llength $argv] < 2 || [llength $argv] > 3} {
    puts stderr "usage: ns wifi-lte.tcl failover|stable OUTDIR \[trace\]"
    exit 2
}
set mode [lindex $argv 0]
set outdir [lindex $argv 1]
set tracing [expr {[llength $argv] == 3 && [lindex $argv 2] == "trace"}]
if {$mode != "failover" && $mode != "stable"} { puts stderr "bad mode $mode"; exit 2 }

Trace set show_sctphdr_ 1
set ns [new Simulator]

lassign [multihomed_host $ns 2] client client_if0 client_if1
lassign [multihomed_host $ns 2] server server_if0 server_if1
set ap_wifi [$ns node]
set ap_lte [$ns node]

# {from to rate delay}: every simplex link, data direction first. Values: the paper's
# Tables 3 (access, upload/download) and 4 (wired), as wifi-lte.toml has them.
set up_links [list \
    [list $client_if0 $ap_wifi 20.79Mb 31.65ms] [list $ap_wifi $server_if0 100Mb 6.13ms] \
    [list $client_if1 $ap_lte 5.40Mb 129.2ms] [list $ap_lte $server_if1 100Mb 6.13ms]]
set down_links [list \
    [list $ap_wifi $client_if0 21.58Mb 31.65ms] [list $server_if0 $ap_wifi 100Mb 6.13ms] \
    [list $ap_lte $client_if1 10.79Mb 129.2ms] [list $server_if1 $ap_lte 100Mb 6.13ms]]
foreach l [concat $up_links $down_links] {
    lassign $l n1 n2 rate delay
    $ns simplex-link $n1 $n2 $rate $delay DropTail
    $ns queue-limit $n1 $n2 50
}

if {$tracing} {
    set trace [open "$outdir/out.tr" w]
    foreach l $up_links {
        $ns trace-queue [lindex $l 0] [lindex $l 1] $trace
    }
    set monitors {}
    foreach l $down_links {
        lappend monitors [$ns monitor-queue [lindex $l 0] [lindex $l 1] ""]
    }
}

set snd [new Agent/SCTP]
set rcv [new Agent/SCTP]
$ns multihome-attach-agent $client $snd
$ns multihome-attach-agent $server $rcv
# preset rfc4960: RTO.Initial 3 s; buffers 256 KiB (sctpsim's default recv_buffer).
configure_sctp_agent $snd 262144 3.0
configure_sctp_agent $rcv 262144 3.0
$ns connect $snd $rcv
$snd set-primary-destination $server_if0

if {$tracing} {
    set agent_trace [open "$outdir/agent.tr" w]
    $snd set trace_all_ 1
    $snd attach $agent_trace
    set ids [open "$outdir/nodes.txt" w]
    foreach {name node} [list client_if0 $client_if0 client_if1 $client_if1 \
                             server_if0 $server_if0 server_if1 $server_if1 \
                             ap_wifi $ap_wifi ap_lte $ap_lte] {
        puts $ids "$name [$node id]"
    }
    close $ids
    # The sender's T3 timeouts, with their times: polled every millisecond from the failure
    # on (ns-2.35 has no event trace for them; tracing timeoutCount_ aborts the run). The
    # primary is marked inactive at its 6th timeout (Path.Max.Retrans 5).
    set timeouts [open "$outdir/timeouts.txt" w]
    set last_timeouts 0
    proc poll_timeouts {} {
        global ns snd timeouts last_timeouts
        set n [$snd set timeoutCount_]
        if {$n != $last_timeouts} {
            puts $timeouts "[$ns now] $n"
            set last_timeouts $n
        }
        if {[$ns now] < 299.0} { $ns at [expr {[$ns now] + 0.001}] poll_timeouts }
    }
    $ns at 99.0 poll_timeouts
}

set ftp [new Application/FTP]
$ftp attach-agent $snd
$ns at 0.5 "$ftp start"

if {$mode == "failover"} {
    # The Wi-Fi link fails in both directions (sctpsim takes the client's interface down).
    $ns rtmodel-at 100.0 down $client_if0 $ap_wifi
}

proc finish {} {
    global ns tracing trace agent_trace monitors outdir snd timeouts
    puts "sim-end [clock microseconds]"
    if {$tracing} {
        $snd print cwnd_
        $ns flush-trace
        close $trace
        close $agent_trace
        close $timeouts
        set f [open "$outdir/drops.txt" w]
        set total 0
        foreach m $monitors { incr total [$m set pdrops_] }
        puts $f "reverse_drops $total"
        close $f
    }
    exit 0
}
$ns at 300.0 "finish"
puts "sim-start [clock microseconds]"
$ns run
