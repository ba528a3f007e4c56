set terminal png size 1400,1000
set output '/work/main/docs/results/logreg-100mbit.png'
set multiplot layout 2,2
set grid
set key bottom right
set xlabel 'training time (s, log)'
set ylabel 'training loss (log)'
set logscale x
set logscale y
plot '/work/main/docs/results/logreg-100mbit.dat' index 0 using 1:3 with linespoints title 'raw', '/work/main/docs/results/logreg-100mbit.dat' index 1 using 1:3 with linespoints title 'int8', '/work/main/docs/results/logreg-100mbit.dat' index 2 using 1:3 with linespoints title '3lc(s=1.00)', '/work/main/docs/results/logreg-100mbit.dat' index 3 using 1:3 with linespoints title '3lc(s=1.75)', '/work/main/docs/results/logreg-100mbit.dat' index 4 using 1:3 with linespoints title 'topk(1%/4%)', '/work/main/docs/results/logreg-100mbit.dat' index 5 using 1:3 with linespoints title 'sketchml'
set xlabel 'training time (s, log)'
set ylabel 'test accuracy (%)'
set logscale x
unset logscale y
plot '/work/main/docs/results/logreg-100mbit.dat' index 0 using 1:4 with linespoints title 'raw', '/work/main/docs/results/logreg-100mbit.dat' index 1 using 1:4 with linespoints title 'int8', '/work/main/docs/results/logreg-100mbit.dat' index 2 using 1:4 with linespoints title '3lc(s=1.00)', '/work/main/docs/results/logreg-100mbit.dat' index 3 using 1:4 with linespoints title '3lc(s=1.75)', '/work/main/docs/results/logreg-100mbit.dat' index 4 using 1:4 with linespoints title 'topk(1%/4%)', '/work/main/docs/results/logreg-100mbit.dat' index 5 using 1:4 with linespoints title 'sketchml'
set xlabel 'MB sent per worker (log)'
set ylabel 'training loss (log)'
set logscale x
set logscale y
plot '/work/main/docs/results/logreg-100mbit.dat' index 0 using 2:3 with linespoints title 'raw', '/work/main/docs/results/logreg-100mbit.dat' index 1 using 2:3 with linespoints title 'int8', '/work/main/docs/results/logreg-100mbit.dat' index 2 using 2:3 with linespoints title '3lc(s=1.00)', '/work/main/docs/results/logreg-100mbit.dat' index 3 using 2:3 with linespoints title '3lc(s=1.75)', '/work/main/docs/results/logreg-100mbit.dat' index 4 using 2:3 with linespoints title 'topk(1%/4%)', '/work/main/docs/results/logreg-100mbit.dat' index 5 using 2:3 with linespoints title 'sketchml'
set xlabel 'MB sent per worker (log)'
set ylabel 'test accuracy (%)'
set logscale x
unset logscale y
plot '/work/main/docs/results/logreg-100mbit.dat' index 0 using 2:4 with linespoints title 'raw', '/work/main/docs/results/logreg-100mbit.dat' index 1 using 2:4 with linespoints title 'int8', '/work/main/docs/results/logreg-100mbit.dat' index 2 using 2:4 with linespoints title '3lc(s=1.00)', '/work/main/docs/results/logreg-100mbit.dat' index 3 using 2:4 with linespoints title '3lc(s=1.75)', '/work/main/docs/results/logreg-100mbit.dat' index 4 using 2:4 with linespoints title 'topk(1%/4%)', '/work/main/docs/results/logreg-100mbit.dat' index 5 using 2:4 with linespoints title 'sketchml'
unset multiplot
