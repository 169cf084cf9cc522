# Statistics shared by the benchmark scripts; sourced, not run (so not
# executable: the guest runs every executable script here).

# quart: "Q1 median Q3" of the numbers on stdin, interpolated linearly
quart() {
	sort -g | awk '{a[NR] = $1}
		function q(p,  i) { i = 1 + p * (NR - 1); return a[int(i)] + (i - int(i)) * (a[int(i) + 1] - a[int(i)]) }
		END { printf "%.3f %.3f %.3f\n", q(0.25), q(0.5), q(0.75) }'
}

# median: the median of the numbers on stdin
median() { quart | cut -d' ' -f2; }
