set terminal png size 1400,1000
set output 'docs/results/mlp-100mbit.png'
set multiplot layout 2,2
set grid
set key bottom right
set xlabel 'training time (s, log)'
set ylabel 'training loss (log)'
set logscale x
set logscale y
plot 'docs/results/mlp-100mbit.dat' index 0 using 1:3 with linespoints title 'raw', 'docs/results/mlp-100mbit.dat' index 1 using 1:3 with linespoints title 'int8', 'docs/results/mlp-100mbit.dat' index 2 using 1:3 with linespoints title '3lc(s=1.00)', 'docs/results/mlp-100mbit.dat' index 3 using 1:3 with linespoints title '3lc(s=1.75)'
set xlabel 'training time (s, log)'
set ylabel 'test accuracy (%)'
set logscale x
unset logscale y
plot 'docs/results/mlp-100mbit.dat' index 0 using 1:4 with linespoints title 'raw', 'docs/results/mlp-100mbit.dat' index 1 using 1:4 with linespoints title 'int8', 'docs/results/mlp-100mbit.dat' index 2 using 1:4 with linespoints title '3lc(s=1.00)', 'docs/results/mlp-100mbit.dat' index 3 using 1:4 with linespoints title '3lc(s=1.75)'
set xlabel 'MB sent per worker (log)'
set ylabel 'training loss (log)'
set logscale x
set logscale y
plot 'docs/results/mlp-100mbit.dat' index 0 using 2:3 with linespoints title 'raw', 'docs/results/mlp-100mbit.dat' index 1 using 2:3 with linespoints title 'int8', 'docs/results/mlp-100mbit.dat' index 2 using 2:3 with linespoints title '3lc(s=1.00)', 'docs/results/mlp-100mbit.dat' index 3 using 2:3 with linespoints title '3lc(s=1.75)'
set xlabel 'MB sent per worker (log)'
set ylabel 'test accuracy (%)'
set logscale x
unset logscale y
plot 'docs/results/mlp-100mbit.dat' index 0 using 2:4 with linespoints title 'raw', 'docs/results/mlp-100mbit.dat' index 1 using 2:4 with linespoints title 'int8', 'docs/results/mlp-100mbit.dat' index 2 using 2:4 with linespoints title '3lc(s=1.00)', 'docs/results/mlp-100mbit.dat' index 3 using 2:4 with linespoints title '3lc(s=1.75)'
unset multiplot
