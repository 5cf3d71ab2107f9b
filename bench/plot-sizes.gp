# The size sweeps of slp_bench (--plot-data) as one PNG: latency p50 and added p50 over direct,
# by request body size (left) and response body size (right), one line per way.
#   gnuplot -e "data='F'; out='P.png'; names='direct nginx slp-socket'; note='...'" bench/plot-sizes.gp
# Added values <= 0 (a proxy within noise of direct) have no place on a log axis: not drawn.
set terminal pngcairo size 1400,1000 font ",11" noenhanced
set output out
n = words(names)
set logscale xy
set grid xtics ytics mytics lc rgb "#dddddd"
set key top left
set xtics ("1k" 1000, "64k" 64000, "256k" 256000, "1M" 1000000, "8M" 8000000, "22M" 22000000)
set xrange [700:30000000]
set style data linespoints
set multiplot layout 2,2 title "slp_bench: direct vs nginx vs slp by body size (c=1, loopback)\n".note
do for [d=0:1] {
    set title (d == 0 ? "request body: latency p50 (ms)" : "response body: latency p50 (ms)")
    set xlabel (d == 0 ? "request body bytes" : "response body bytes")
    plot for [i=1:n] data index d using 1:(column(2*i+1) > 0 ? column(2*i+1) : NaN) \
        title word(names, i) pt 7 lw 2
}
do for [d=0:1] {
    set title (d == 0 ? "request body: added p50 over direct (ms)" \
                      : "response body: added p50 over direct (ms)")
    set xlabel (d == 0 ? "request body bytes" : "response body bytes")
    plot for [i=2:n] data index d using 1:(column(2*i+2) > 0 ? column(2*i+2) : NaN) \
        title word(names, i) pt 7 lw 2 lc i
}
unset multiplot
