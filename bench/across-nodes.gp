# Plots for docs/benchmarks.md (called by bench/across-nodes-report.py):
#   gnuplot -e "tokens='T.dat'; out='DIR'; columns=N; curves='PLOT-ARGS'" across-nodes.gp
# T.dat: a header row of configuration names, then one row per link of tokens/s.
set terminal pngcairo size 900,520 font "sans,10"

set output out."/tokens_per_s.png"
set title "Training tokens/s, 2 nodes x 1 rank (higher is better)"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set ylabel "tokens/s (all ranks)"
set yrange [0:*]
set grid ytics
set key top right
plot for [c=2:columns+1] tokens using c:xtic(1) title columnheader(c)

reset
set terminal pngcairo size 900,720 font "sans,10"
set output out."/eval_loss.png"
set title "Eval loss against training time (dash: link; colour: reducer)"
set xlabel "training seconds (evaluations excluded; log scale: the links span 100x)"
set ylabel "eval loss (nats)"
set logscale x
# The first evaluations (above 6 nats) say little; the race is near the target.
set yrange [*:6]
set grid
set key outside below left Left reverse font ",8"
eval "plot ".curves
