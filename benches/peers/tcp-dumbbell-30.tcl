# tcp-dumbbell-30.toml in ns-2.35: 30 TCP NewReno uploads (Agent/TCP/Newreno + FTP) through
# one 50 Mbit/s, 10 ms bottleneck; 100 Mbit/s, 1 ms access links; the sink host behind R2 on
# 1 Gbit/s, 1 ms; 100-packet DropTail queues; host i (from 0) starts at i/30 s; end at 60 s.
# See README.md for the parameter mapping.
#
# Usage: ns tcp-dumbbell-30.tcl OUTDIR [trace]
#   trace  write OUTDIR/flows.txt (per flow: start, acknowledged bytes, retransmitted packets,
#          timeouts) and OUTDIR/drops.txt (drops per queue) at the end; without it nothing is
#          written, as in a timing run.
# Prints "sim-start US" just before `$ns run` and "sim-end US" when the run ends.

if {[llength $argv] < 1 || [llength $argv] > 2} {
    puts stderr "usage: ns tcp-dumbbell-30.tcl OUTDIR \[trace\]"
    exit 2
}
set outdir [lindex $argv 0]
set tracing [expr {[llength $argv] == 2 && [lindex $argv 1] == "trace"}]

set flows 30
set mss 1460
set duration 60.0

set ns [new Simulator]
set r1 [$ns node]
set r2 [$ns node]
set d [$ns node]
# {a b rate delay}: duplex links, each direction with its own 100-packet queue.
set links [list [list $r1 $r2 50Mb 10ms] [list $r2 $d 1Gb 1ms]]
set hosts {}
for {set i 0} {$i < $flows} {incr i} {
    set h [$ns node]
    lappend hosts $h
    lappend links [list $h $r1 100Mb 1ms]
}
foreach l $links {
    lassign $l a b rate delay
    $ns duplex-link $a $b $rate $delay DropTail
    $ns queue-limit $a $b 100
    $ns queue-limit $b $a 100
}
if {$tracing} {
    set monitors {}
    foreach l $links {
        lassign $l a b
        lappend monitors [list "[$a id]->[$b id]" [$ns monitor-queue $a $b ""]]
        lappend monitors [list "[$b id]->[$a id]" [$ns monitor-queue $b $a ""]]
    }
}

# TCP: NewReno (RFC 6582 as ns-2 has it), 1460-byte segments (1500-byte packets with the
# 40-byte header ns-2 adds), initial window 10 (RFC 6928 for this MSS), a window of 1 MiB
# (718 segments; ns-2's default is 20), RTO initial and minimum 1 s, maximum 60 s, 1 ms timer
# granularity. Sink: delayed ACKs, every 2nd segment or 200 ms.
Agent/TCP set packetSize_ $mss
Agent/TCP set windowInit_ 10
Agent/TCP set window_ 718
Agent/TCP set maxcwnd_ 0
Agent/TCP set rtxcur_init_ 1.0
Agent/TCP set minrto_ 1.0
Agent/TCP set maxrto_ 60.0
Agent/TCP set tcpTick_ 0.001
Agent/TCPSink/DelAck set interval_ 0.2

set senders {}
for {set i 0} {$i < $flows} {incr i} {
    set tcp [new Agent/TCP/Newreno]
    $tcp set fid_ $i
    set sink [new Agent/TCPSink/DelAck]
    $ns attach-agent [lindex $hosts $i] $tcp
    $ns attach-agent $d $sink
    $ns connect $tcp $sink
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp
    set start [expr {$i * 1.0 / $flows}]
    $ns at $start "$ftp start"
    lappend senders [list $tcp $start]
}

proc finish {} {
    global ns tracing senders monitors outdir mss
    puts "sim-end [clock microseconds]"
    if {$tracing} {
        set f [open "$outdir/flows.txt" w]
        foreach s $senders {
            lassign $s tcp start
            # ack_: the highest cumulatively acknowledged segment (numbered from 0).
            set acked [expr {([$tcp set ack_] + 1) * $mss}]
            puts $f "$start $acked [$tcp set nrexmitpack_] [$tcp set nrexmit_]"
        }
        close $f
        set f [open "$outdir/drops.txt" w]
        foreach m $monitors {
            puts $f "[lindex $m 0] [[lindex $m 1] set pdrops_]"
        }
        close $f
    }
    exit 0
}
$ns at $duration "finish"
puts "sim-start [clock microseconds]"
$ns run
