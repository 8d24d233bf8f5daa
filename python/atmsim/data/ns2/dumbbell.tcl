# atmsim validation: the IP dumbbell in ns-2 (tested with ns-2.35, Debian package ns2).
#
#   s_i --access--> r1 ==bottleneck==> r2 --access--> d_i      i = 1..n
#
# All links are duplex (ACKs come back the same way). One TCP agent per flow
# from s_i to d_i with an infinite FTP source; the sink ACKs every segment
# (no delayed ACK). The script is driven by python/atmsim/ns2.py; run it by
# hand with
#
#   ns dumbbell.tcl n=5 variant=reno starts=0,0.1,0.2,0.3,0.4
#
# Arguments are key=value pairs (any order; defaults below: the validation
# dumbbell of docs/validation.md, except the start times). Times in
# seconds, rates in bit/s, sizes in bytes unless named otherwise. Lists
# (starts, access_delays) are comma separated, one value per flow, or one
# value for all flows.
#
# trace=FILE (debugging) writes ns-2's variable trace of cwnd_, t_seqno_ and
# ack_ of every flow to FILE.
#
# Output (stdout), one record per line, fields key=value separated by spaces:
#   ns2 version=... variant=... n=... duration=...
#   flow id=i <counters of flow i>
#   total <sums>
#   wall run_s=<wall seconds spent in $ns run>
# The meaning of every field is in docs/validation.md; ns2.py parses it.

# ---------------------------------------------------------------- arguments
array set P {
    n 5
    variant reno
    duration 100.0
    access_rate 100e6
    access_delays 0.001
    access_limit 100000
    bottleneck_rate 10e6
    bottleneck_delay 0.020
    buffer 50
    mss 960
    window 256
    window_init 1
    tcp_tick 0.001
    min_rto 0.2
    max_rto 64.0
    initial_rto 3.0
    starts 0
    bug_fix 1
    max_sack_blocks 3
    monitor 1
    seed 0
    trace {}
}
foreach arg $argv {
    set eq [string first "=" $arg]
    if {$eq < 1} {
        puts stderr "dumbbell.tcl: argument '$arg' is not key=value"
        exit 2
    }
    set key [string range $arg 0 [expr {$eq - 1}]]
    if {![info exists P($key)]} {
        puts stderr "dumbbell.tcl: unknown parameter '$key' (known: [lsort [array names P]])"
        exit 2
    }
    set P($key) [string range $arg [expr {$eq + 1}] end]
}

proc per_flow {name n} {
    global P
    set values [split $P($name) ","]
    if {[llength $values] == 1} {
        return [lrepeat $n [lindex $values 0]]
    }
    if {[llength $values] != $n} {
        puts stderr "dumbbell.tcl: $name has [llength $values] values, expected 1 or $n"
        exit 2
    }
    return $values
}

set n $P(n)
set starts [per_flow starts $n]
set access_delays [per_flow access_delays $n]

# ---------------------------------------------------------------- TCP defaults
# Every default that differs between ns-2.35 and a plain 1990s BSD TCP (the
# model atmsim follows) is set explicitly; docs/validation.md explains each.
Agent/TCP set packetSize_ $P(mss)         ;# payload bytes; +40 header bytes on the wire
Agent/TCP set tcpip_base_hdr_size_ 40
Agent/TCP set useHeaders_ true
Agent/TCP set window_ $P(window)          ;# receiver window, packets
Agent/TCP set windowInit_ $P(window_init)
Agent/TCP set windowInitOption_ 1
Agent/TCP set syn_ false                  ;# no SYN exchange: data from the first packet
Agent/TCP set delay_growth_ false         ;# cwnd grows from the first ACK
Agent/TCP set singledup_ 0                ;# no Limited Transmit (RFC 3042)
Agent/TCP set maxburst_ 0
Agent/TCP set overhead_ 0
Agent/TCP set tcpTick_ $P(tcp_tick)
Agent/TCP set minrto_ $P(min_rto)
Agent/TCP set maxrto_ $P(max_rto)
Agent/TCP set rtxcur_init_ $P(initial_rto)
Agent/TCP set timestamps_ false
Agent/TCP set bugFix_ $P(bug_fix)         ;# 1: one fast retransmit per window (ns-2 default)
Agent/TCP set ecn_ 0
Agent/TCP set maxcwnd_ 0
Agent/TCP set max_ssthresh_ 0
Agent/TCPSink set packetSize_ 40
Agent/TCPSink set maxSackBlocks_ $P(max_sack_blocks)

switch -- $P(variant) {
    tahoe_nofr { set tcp_class Agent/TCP;         set sink_class Agent/TCPSink }
    tahoe      { set tcp_class Agent/TCP;         set sink_class Agent/TCPSink }
    reno       { set tcp_class Agent/TCP/Reno;    set sink_class Agent/TCPSink }
    newreno    { set tcp_class Agent/TCP/Newreno; set sink_class Agent/TCPSink }
    sack       { set tcp_class Agent/TCP/Sack1;   set sink_class Agent/TCPSink/Sack1 }
    default {
        puts stderr "dumbbell.tcl: variant '$P(variant)' is not one of tahoe_nofr tahoe reno newreno sack"
        exit 2
    }
}

# ---------------------------------------------------------------- topology
set ns [new Simulator]
# The only randomness in this model is each TCP agent's clock phase against
# tcpTick_ (boot_time_, used to round RTT samples to ticks). seed=0 keeps
# ns-2's fixed default stream; other values reseed it (perturbation runs).
if {$P(seed) != 0} {
    global defaultRNG
    $defaultRNG seed $P(seed)
}
set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 $P(bottleneck_rate) $P(bottleneck_delay) DropTail
# ns-2's DropTail drops when (waiting + 1) >= limit_: a limit of B + 1 keeps
# B packets waiting besides the one being transmitted, which is atmsim's buffer B.
$ns queue-limit $r1 $r2 [expr {$P(buffer) + 1}]
$ns queue-limit $r2 $r1 [expr {$P(buffer) + 1}]

if {$P(trace) != ""} {
    set trace_file [open $P(trace) w]
}
if {$P(monitor)} {
    set fmon [$ns makeflowmon Fid]
    $ns attach-fmon [$ns link $r1 $r2] $fmon
}

for {set i 1} {$i <= $n} {incr i} {
    set d [lindex $access_delays [expr {$i - 1}]]
    set s($i) [$ns node]
    set dst($i) [$ns node]
    $ns duplex-link $s($i) $r1 $P(access_rate) $d DropTail
    $ns duplex-link $r2 $dst($i) $P(access_rate) $d DropTail
    foreach {a b} [list $s($i) $r1 $r1 $s($i) $r2 $dst($i) $dst($i) $r2] {
        $ns queue-limit $a $b $P(access_limit)
    }

    set tcp($i) [new $tcp_class]
    if {$P(variant) == "tahoe_nofr"} {
        $tcp($i) set noFastRetrans_ true
    }
    $tcp($i) set fid_ $i
    set sink($i) [new $sink_class]
    $ns attach-agent $s($i) $tcp($i)
    $ns attach-agent $dst($i) $sink($i)
    $ns connect $tcp($i) $sink($i)
    if {$P(trace) != ""} {
        # Debugging aid: every change of cwnd_, t_seqno_ and ack_ of every flow.
        $tcp($i) attach $trace_file
        $tcp($i) trace cwnd_
        $tcp($i) trace t_seqno_
        $tcp($i) trace ack_
    }
    set ftp($i) [new Application/FTP]
    $ftp($i) attach-agent $tcp($i)
    $ns at [lindex $starts [expr {$i - 1}]] "$ftp($i) start"
}

# ---------------------------------------------------------------- results
proc finish {} {
    global ns n tcp sink fmon P wall_start
    set wall_s [expr {([clock microseconds] - $wall_start) / 1e6}]
    set drops_of {}
    set arrivals_of {}
    if {$P(monitor)} {
        foreach f [$fmon flows] {
            dict set drops_of [$f set flowid_] [$f set pdrops_]
            dict set arrivals_of [$f set flowid_] [$f set parrivals_]
        }
    }
    set hdr [expr {$P(mss) + 40}]
    puts "ns2 version=[ns-version] variant=$P(variant) n=$n duration=$P(duration) mss=$P(mss)"
    foreach k {delivered sent rexmit timeouts fr acks drops} { set tot($k) 0 }
    for {set i 1} {$i <= $n} {incr i} {
        set t $tcp($i)
        # TCPSink bytes_ counts in-order bytes handed up, headers included.
        set delivered_packets [expr {int([$sink($i) set bytes_]) / $hdr}]
        set sent [$t set ndatapack_]
        set rexmit [$t set nrexmitpack_]
        set timeouts [$t set nrexmit_]
        # ncwndcuts_ counts every window reduction: timeouts + fast retransmits
        # here (no ECN, no idle restarts with an infinite source).
        set fr [expr {[$t set ncwndcuts_] - $timeouts}]
        set acks [$t set nackpack_]
        set drops [expr {[dict exists $drops_of $i] ? [dict get $drops_of $i] : -1}]
        set arrivals [expr {[dict exists $arrivals_of $i] ? [dict get $arrivals_of $i] : -1}]
        set srtt [expr {[$t set srtt_] / 8.0 * $P(tcp_tick)}]
        puts [format "flow id=%d delivered_packets=%d goodput_bytes=%d data_packets_sent=%d retransmitted_packets=%d timeouts=%d fast_retransmits=%d acks_received=%d bottleneck_arrivals=%d bottleneck_drops=%d final_cwnd_packets=%.4f final_ssthresh_packets=%d srtt_s=%.4f highest_ack=%d" \
            $i $delivered_packets [expr {$delivered_packets * $P(mss)}] $sent $rexmit $timeouts $fr $acks \
            $arrivals $drops [$t set cwnd_] [$t set ssthresh_] $srtt [$t set ack_]]
        incr tot(delivered) $delivered_packets
        incr tot(sent) $sent
        incr tot(rexmit) $rexmit
        incr tot(timeouts) $timeouts
        incr tot(fr) $fr
        incr tot(acks) $acks
        incr tot(drops) [expr {$drops < 0 ? 0 : $drops}]
    }
    # Packet transmissions on all links (data and ACK, every hop). Data packets
    # cross 3 links unless dropped at the bottleneck (then they crossed 1);
    # each ACK a sender received crossed 3. Packets still in flight at the end
    # are not counted.
    set hops [expr {3 * $tot(sent) - 2 * $tot(drops) + 3 * $tot(acks)}]
    puts [format "total delivered_packets=%d goodput_bytes=%d data_packets_sent=%d retransmitted_packets=%d timeouts=%d fast_retransmits=%d acks_received=%d bottleneck_drops=%d link_transmissions=%d" \
        $tot(delivered) [expr {$tot(delivered) * $P(mss)}] $tot(sent) $tot(rexmit) $tot(timeouts) $tot(fr) \
        $tot(acks) $tot(drops) $hops]
    puts [format "wall run_s=%.6f" $wall_s]
    flush stdout
    if {$P(trace) != ""} {
        global trace_file
        close $trace_file
    }
    exit 0
}

$ns at $P(duration) "finish"
set wall_start [clock microseconds]
$ns run
