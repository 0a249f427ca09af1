set style data histograms
set style histogram errorbars gap 2 lw 1
set style fill solid 0.6 border -1
set key top left
set yrange [0:*]
set xtics rotate by -30
set ylabel 'create creates/sec'
set title 'create: mean of runs, bars = min..max'
set terminal svg size 800,480 dynamic noenhanced
set output '/work/wt/xenwhere/tests/xen/blkbench/plots/create.svg'
plot '/work/wt/xenwhere/tests/xen/blkbench/plots/create.dat' using 5:6:7:xtic(1) title 'domU'
set terminal pngcairo size 800,480 noenhanced
set output '/work/wt/xenwhere/tests/xen/blkbench/plots/create.png'
plot '/work/wt/xenwhere/tests/xen/blkbench/plots/create.dat' using 5:6:7:xtic(1) title 'domU'
