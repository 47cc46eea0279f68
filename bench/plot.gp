# bench/plot.gp - the plots of zkl-bench, from data files that
# bench/run-bench.sh extracts from the CSV.
#   gnuplot -e "dir='OUT'; configs='fsync nosync'" bench/plot.gp
# reads OUT/handoffs-<config>.dat ("N floor zkl kazoo zkl-loop curator"),
# OUT/aggregate-<config>.dat ("T floor zkl zkl-sessions kazoo curator"),
# OUT/wake-<config>.dat ("Q floor zkl") and OUT/herd-<config>.dat ("C floor
# zkl zkl-claim kazoo"), writes OUT/handoffs.png, OUT/aggregate.png, OUT/wake-bytes.png and
# OUT/herd-bytes.png: one panel per server config; the last two only for
# the configs in wconfigs (default: all), those that ran S4 and S10 (the
# ensemble runs 1, 3 and 14 only), and not at all when there is none.
if (!exists("dir")) dir = "."
if (!exists("configs")) configs = "fsync nosync"
if (!exists("wconfigs")) wconfigs = configs
n = words(configs)
set datafile missing "?"
set key top right
set grid
set style data linespoints
set terminal pngcairo size (560 * n), 420 font ",10"

set output dir."/handoffs.png"
set multiplot layout 1, n title "Contended handoff throughput (S3): handoffs/s vs contenders"
set logscale x 2
set xlabel "contenders N (one session each)"
set ylabel "handoffs/s"
set yrange [0:*]
do for [i = 1:n] {
  c = word(configs, i)
  set title "server: ".c
  f = dir."/handoffs-".c.".dat"
  plot f using 1:2 title "floor (by hand)" lw 2 pt 7, \
       f using 1:3 title "zkl" lw 2 pt 5, \
       f using 1:4 title "kazoo" lw 2 pt 9, \
       f using 1:5 title "zkl-loop (one thread, async)" lw 2 pt 13, \
       f using 1:6 title "Curator" lw 2 pt 11
}
unset multiplot

set output dir."/aggregate.png"
set key top left
set multiplot layout 1, n title "Aggregate throughput on distinct keys (S14): cycles/s vs threads of one process"
set logscale x 2
set xlabel "threads T (a path each)"
set ylabel "lock/unlock cycles/s, all threads"
set yrange [0:*]
do for [i = 1:n] {
  c = word(configs, i)
  set title "server: ".c
  f = dir."/aggregate-".c.".dat"
  plot f using 1:2 title "floor (one zhandle)" lw 2 pt 7, \
       f using 1:3 title "zkl (one session)" lw 2 pt 5, \
       f using 1:4 title "zkl (a session per thread)" lw 2 pt 13, \
       f using 1:5 title "kazoo (one client)" lw 2 pt 9, \
       f using 1:6 title "Curator (one client)" lw 2 pt 11
}
unset multiplot
set key top right

n = words(wconfigs)
configs = wconfigs
if (n == 0) exit
set terminal pngcairo size (560 * n), 420 font ",10"
set output dir."/wake-bytes.png"
set multiplot layout 1, n title "Wake cost (S4): server bytes per handoff vs queue length"
set logscale xy 10
set xlabel "waiters queued once (Q)"
set ylabel "server bytes per handoff (requests + replies)"
set yrange [*:*]
do for [i = 1:n] {
  c = word(configs, i)
  set title "server: ".c
  f = dir."/wake-".c.".dat"
  plot f using 1:2 title "floor (re-lists on wake)" lw 2 pt 7, \
       f using 1:3 title "zkl" lw 2 pt 5
}
unset multiplot

set output dir."/herd-bytes.png"
set key top left
set multiplot layout 1, n title "Herd (S10): server bytes per put vs blocked consumers"
set logscale xy 10
set xlabel "consumers blocked in a take (C, one session each)"
set ylabel "server bytes per put (requests + replies)"
set yrange [*:*]
do for [i = 1:n] {
  c = word(configs, i)
  set title "server: ".c
  f = dir."/herd-".c.".dat"
  plot f using 1:2 title "floor (the recipe: all watch the children)" lw 2 pt 7, \
       f using 1:3 title "zkl take" lw 2 pt 5, \
       f using 1:4 title "zkl claim+ack" lw 2 pt 13, \
       f using 1:5 title "kazoo LockingQueue" lw 2 pt 9
}
unset multiplot
