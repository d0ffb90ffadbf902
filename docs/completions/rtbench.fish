# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_rtbench_global_optspecs
	string join \n h/help V/version
end

function __fish_rtbench_needs_command
	# Figure out if the current invocation already has a command.
	set -l cmd (commandline -opc)
	set -e cmd[1]
	argparse -s (__fish_rtbench_global_optspecs) -- $cmd 2>/dev/null
	or return
	if set -q argv[1]
		# Also print the command, so this can be used to figure out what it is.
		echo $argv[1]
		return 1
	end
	return 0
end

function __fish_rtbench_using_subcommand
	set -l cmd (__fish_rtbench_needs_command)
	test -z "$cmd"
	and return 1
	contains -- $cmd[1] $argv
end

complete -c rtbench -n "__fish_rtbench_needs_command" -s h -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_needs_command" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_needs_command" -f -a "cyclic" -d 'Timer-wakeup latency, cyclictest-compatible (flags, T: lines, -h dump, --json)'
complete -c rtbench -n "__fish_rtbench_needs_command" -f -a "sysinfo" -d 'Print the system snapshot: kernel, PREEMPT_RT, isolated/housekeeping CPUs'
complete -c rtbench -n "__fish_rtbench_needs_command" -f -a "selftest" -d 'Boot self-test: tune, measure under load, judge the limits, report (rtbench.service)'
complete -c rtbench -n "__fish_rtbench_needs_command" -f -a "monitor" -d 'Long-running latency monitoring for the field: one journal entry per CPU per window'
complete -c rtbench -n "__fish_rtbench_needs_command" -f -a "diagnose" -d 'Collect a diagnostics bundle (.tar.gz) for a field engineer: results, windows, tuning, system snapshot, journal; SUMMARY.txt says what looks wrong'
complete -c rtbench -n "__fish_rtbench_needs_command" -f -a "report" -d 'Show stored self-test results: the last verdict and table, or all kept runs'
complete -c rtbench -n "__fish_rtbench_needs_command" -f -a "plot" -d 'Draw a latency plot (SVG, one curve per CPU, log count axis) from a result'
complete -c rtbench -n "__fish_rtbench_needs_command" -f -a "compare" -d 'Compare runs (stored results, --json, -h dumps): per test, CPU and statistic, equivalent, regression, improvement or inconclusive; what differs between them'
complete -c rtbench -n "__fish_rtbench_needs_command" -f -a "config" -d 'Print the configuration template, or check a configuration file without running anything'
complete -c rtbench -n "__fish_rtbench_needs_command" -f -a "tune" -d 'Check, apply, revert or show the RT tuning of the configuration\'s [tuning]'
complete -c rtbench -n "__fish_rtbench_needs_command" -f -a "pmq" -d 'POSIX message-queue latency between thread pairs, pmqtest-compatible'
complete -c rtbench -n "__fish_rtbench_needs_command" -f -a "pipe" -d 'Task-switch latency: pipe ping-pong between two threads or processes'
complete -c rtbench -n "__fish_rtbench_needs_command" -f -a "oslat" -d 'Busy-poll noise of (isolated) CPUs, oslat-compatible (flags, per-CPU table, --json)'
complete -c rtbench -n "__fish_rtbench_needs_command" -f -a "load" -d 'Run only the background load (--load/--load-cmd) for -D TIME'
complete -c rtbench -n "__fish_rtbench_needs_command" -f -a "load-worker" -d 'Internal: one built-in load worker process (started by --load)'
complete -c rtbench -n "__fish_rtbench_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s a -l affinity -d 'Pin threads: thread N on CPU N without CPUSET, else round-robin over CPUSET (cpu-list like 0-3,5 or 1-7:2/4, N = last CPU, all; or a 0x hex mask)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s b -l breaktrace -d 'Stop the test (and tracing) when a latency exceeds USEC µs; exit 1' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s c -l clock -d 'Clock: 0|monotonic (default) or 1|realtime' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s d -l distance -d 'Distance of thread intervals in µs (thread i: interval + i*DIST; 0 with -h)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s h -l histogram -d 'Latency histogram of US 1-µs buckets, printed at exit (same interval on all threads)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s H -l histofall -d 'Like -h, plus a summary column over all threads' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -l histfile -d 'Write the -h/-H histogram to PATH instead of standard output' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -l histogram-layout -d 'Histogram layout of cyclictest 2.7+ (current) or <= 2.6 (legacy) [default: current; legacy when called as cyclictest]' -r -f -a "current\t'cyclictest 2.7+: zero rows omitted, no `# Total:` line'
legacy\t'cyclictest <= 2.6: every row and a `# Total:` line (old OSADL scripts)'"
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s i -l interval -d 'Base interval of the threads in µs' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s l -l loops -d 'Number of cycles per thread; 0 = endless' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s p -l priority -d 'Priority of the highest-priority thread (1..99 FIFO/RR; 0 = SCHED_OTHER)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -l policy -d 'Policy of the measuring threads: other, normal, batch, idle, fifo, rr' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s t -l threads -d 'Number of threads; without NUM one per online CPU' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -l explain -d 'Explain samples over USEC µs from the kernel\'s trace events: what ran on the CPU between the deadline and the wakeup (a tracefs instance of rtbench\'s own; root). Each new maximum is explained, the others up to 4 a second per CPU; every one is counted by its cause in the closing `# Causes:` block. -b explains the sample that stops the run' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s o -l oscope -d 'With -v: print only the largest of every RED samples, with its cycle (cyclictest\'s oscilloscope reduction)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -l load -d 'Built-in load: cpu:N (busy loops), vm:N:SIZE (allocate, touch, free SIZE bytes, e.g. 64M), io:N (write + fsync an unlinked temp file in $TMPDIR); comma-separated' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -l load-cmd -d 'External load command, e.g. "stress-ng --cpu 2" or "iperf3 -c host -t 0" (split like a shell would, no expansion); its output goes to standard error' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -l load-cpus -d 'CPUs the load runs on (default: all online CPUs)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s D -l duration -d 'Run time: N seconds, or with suffix s, m, h, d (e.g. 10s, 5m, 12h)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -l json -d 'Write results as JSON (rt-tests file_version 1 plus an "rtbench" object); - for stdout' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -l mainaffinity -d 'CPUs for the main thread (default: first housekeeping CPU)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -l report-interval -d 'Seconds between live report blocks (without -q)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -l latency -d 'PM QoS latency target written to /dev/cpu_dma_latency, in µs' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s m -l mlockall -d 'Lock current and future memory (the default; kept for cyclictest command lines)'
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s n -l nanosleep -d 'Accepted and ignored (cyclictest 0.x option that vendor docs still pass)'
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -l priospread -d 'Spread priorities: thread i gets PRIO - i'
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s S -l smp -d 'Standard SMP testing: -a -t with the same priority on all threads'
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -l tracemark -d 'Write a trace marker when -b fires'
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -l explain-timerlat -d 'With --explain or -b: also run the kernel\'s timerlat tracer for a second opinion (adds a SCHED_FIFO 95 thread per measured CPU)'
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s v -l verbose -d 'Every sample on standard output as cyclictest prints it, `THREAD:CYCLE:LATENCY` (µs; ns with -N), instead of the live T: lines'
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s u -l unbuffered -d 'Unbuffered output: every line is written at once (always so; accepted for cyclictest command lines)'
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -l no-mlockall -d 'Do not call mlockall'
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s N -l nsecs -d 'Print results in ns instead of µs'
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s q -l quiet -d 'Print only a summary at exit'
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -l default-system -d 'Leave /dev/cpu_dma_latency alone'
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand cyclic" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand sysinfo" -l json -d 'Print JSON instead of text'
complete -c rtbench -n "__fish_rtbench_using_subcommand sysinfo" -s h -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand sysinfo" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand selftest" -l config -d 'Configuration file (default /etc/rtbench/rtbench.toml; when it is missing the documented defaults are used)' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand selftest" -l log-format -d 'Where the entries go: auto (journald, else text on stderr), logfmt (key=value lines on stderr, for syslog)' -r -f -a "auto\t''
journal\t''
logfmt\t''
text\t''"
complete -c rtbench -n "__fish_rtbench_using_subcommand selftest" -s h -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand selftest" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand monitor" -l config -d 'Configuration file (default /etc/rtbench/rtbench.toml; when it is missing the documented defaults are used)' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand monitor" -s a -l cpus -d 'CPUs to monitor, one thread each (cpu-list; default every online CPU)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand monitor" -s i -l interval -d 'Wakeup interval in µs (50..1000000; default 1000)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand monitor" -s p -l priority -d 'SCHED_FIFO priority 1..99 (default 98)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand monitor" -l window -d 'Window length: one journal entry per CPU per window (1s..1d; default 5m)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand monitor" -l dir -d 'State file and window store directory (default /var/lib/rtbench/monitor)' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand monitor" -l prometheus -d 'Prometheus textfile (an absolute path), updated every window' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand monitor" -l log-format -d 'Where the entries go: auto (journald, else text on stderr), journal, logfmt (key=value lines on stderr, for syslog), text' -r -f -a "auto\t''
journal\t''
logfmt\t''
text\t''"
complete -c rtbench -n "__fish_rtbench_using_subcommand monitor" -s D -l duration -d 'Stop after TIME (s, m, h, d; default: run until SIGTERM)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand monitor" -s h -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand monitor" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand diagnose" -s o -l output -d 'The bundle to write (.tar.gz), written atomically; - for standard output' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand diagnose" -l config -d 'Configuration file (default /etc/rtbench/rtbench.toml; when it is missing the documented defaults are used)' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand diagnose" -l dir -d 'Results directory (default: [output] results_dir of the configuration)' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand diagnose" -l since -d 'Monitor windows and journal entries of the last TIME (s, m, h, d)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand diagnose" -l sysroot -d 'Root of /proc and /sys (tests run against a temporary tree)' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand diagnose" -s h -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand diagnose" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand report" -l format -d 'Output format: table (default), json (as --json) or junit (JUnit XML: one test case per test, CPU or pair and limit, one per tuning item)' -r -f -a "table\t''
json\t''
junit\t''"
complete -c rtbench -n "__fish_rtbench_using_subcommand report" -l since -d 'The monitor\'s windows of the last TIME (s, m, h, d) instead of self-test results: worst max, p99.9, p99, overruns, missed periods per CPU' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand report" -l dir -d 'Results directory (default: [output] results_dir of the configuration)' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand report" -l config -d 'Configuration file to read [output] from (default /etc/rtbench/rtbench.toml; when it is missing the documented defaults are used)' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand report" -l json -d 'Print the stored JSON instead of the table'
complete -c rtbench -n "__fish_rtbench_using_subcommand report" -l all -d 'Every kept run instead of the last one'
complete -c rtbench -n "__fish_rtbench_using_subcommand report" -s h -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand report" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand plot" -s o -l output -d 'SVG file to write (atomically); - for standard output' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand plot" -l title -d 'Title instead of the one made from the input (host, kernel)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand plot" -l x-max -d 'End of the latency axis in µs (default: the histogram\'s range or the largest maximum; a self-test result without [output] histogram_us has a log axis); buckets beyond it are left out, maxima beyond it marked at the edge' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand plot" -l test -d 'Test to plot from a stored self-test result (default: cyclic, else the first; CONDITION/TEST for a test of a [[condition]], e.g. stress/cyclic)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand plot" -s h -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand plot" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand compare" -l tolerance -d 'Relative tolerance, %: a larger latency counts as a difference only beyond it (default 100: twice as large)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand compare" -l tolerance-us -d 'Absolute tolerance, µs, added to the relative one (default 5)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand compare" -l plot -d 'Overlay the histograms of one test of every run in an SVG plot (- for standard output)' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand compare" -l test -d 'Test to overlay (default: cyclic, else the baseline\'s first; CONDITION/TEST with conditions)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand compare" -s h -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand compare" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand config; and not __fish_seen_subcommand_from template check help" -s h -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand config; and not __fish_seen_subcommand_from template check help" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand config; and not __fish_seen_subcommand_from template check help" -f -a "template" -d 'Print the configuration template: every key, its default and what it does'
complete -c rtbench -n "__fish_rtbench_using_subcommand config; and not __fish_seen_subcommand_from template check help" -f -a "check" -d 'Validate a configuration file against this machine\'s CPUs; run nothing, write nothing'
complete -c rtbench -n "__fish_rtbench_using_subcommand config; and not __fish_seen_subcommand_from template check help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c rtbench -n "__fish_rtbench_using_subcommand config; and __fish_seen_subcommand_from template" -s h -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand config; and __fish_seen_subcommand_from template" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand config; and __fish_seen_subcommand_from check" -l sysroot -d 'Root of /proc and /sys (tests run against a temporary tree)' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand config; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand config; and __fish_seen_subcommand_from check" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "template" -d 'Print the configuration template: every key, its default and what it does'
complete -c rtbench -n "__fish_rtbench_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "check" -d 'Validate a configuration file against this machine\'s CPUs; run nothing, write nothing'
complete -c rtbench -n "__fish_rtbench_using_subcommand config; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and not __fish_seen_subcommand_from check apply revert status help" -s h -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and not __fish_seen_subcommand_from check apply revert status help" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and not __fish_seen_subcommand_from check apply revert status help" -f -a "check" -d 'Compare the kernel\'s effective state with [tuning] (no file: the generic real-time audit); write nothing'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and not __fish_seen_subcommand_from check apply revert status help" -f -a "apply" -d 'Change what differs as a transaction (journal in /run/rtbench, rollback on failure)'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and not __fish_seen_subcommand_from check apply revert status help" -f -a "revert" -d 'Restore every value recorded by the last committed apply'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and not __fish_seen_subcommand_from check apply revert status help" -f -a "status" -d 'Show the journal: state and recorded changes'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and not __fish_seen_subcommand_from check apply revert status help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from check" -l config -d 'Configuration file' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from check" -l sysroot -d 'Root of /proc and /sys (tests run against a temporary tree)' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from check" -l pause-after-writes -d 'Test hook: sleep after this many kernel writes until killed' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from check" -l json -d 'Print the report as JSON'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from check" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from apply" -l config -d 'Configuration file' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from apply" -l sysroot -d 'Root of /proc and /sys (tests run against a temporary tree)' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from apply" -l pause-after-writes -d 'Test hook: sleep after this many kernel writes until killed' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from apply" -l json -d 'Print the report as JSON'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from apply" -s h -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from apply" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from revert" -l config -d 'Configuration file' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from revert" -l sysroot -d 'Root of /proc and /sys (tests run against a temporary tree)' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from revert" -l pause-after-writes -d 'Test hook: sleep after this many kernel writes until killed' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from revert" -l json -d 'Print the report as JSON'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from revert" -s h -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from revert" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from status" -l config -d 'Configuration file' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from status" -l sysroot -d 'Root of /proc and /sys (tests run against a temporary tree)' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from status" -l pause-after-writes -d 'Test hook: sleep after this many kernel writes until killed' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from status" -l json -d 'Print the report as JSON'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from status" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from help" -f -a "check" -d 'Compare the kernel\'s effective state with [tuning] (no file: the generic real-time audit); write nothing'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from help" -f -a "apply" -d 'Change what differs as a transaction (journal in /run/rtbench, rollback on failure)'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from help" -f -a "revert" -d 'Restore every value recorded by the last committed apply'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from help" -f -a "status" -d 'Show the journal: state and recorded changes'
complete -c rtbench -n "__fish_rtbench_using_subcommand tune; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -s d -l distance -d 'Distance of pair intervals in µs (pair i: interval + i*DIST)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -s i -l interval -d 'Receiver\'s delay before it asks for the next message, µs (pmqtest\'s interval)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -s a -l affinity -d 'Pin: pair N on CPU N without CPUSET, else round-robin over CPUSET (a single CPU pins every pair there, as pmqtest -a NUM); both ends of a pair share the CPU' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -s b -l breaktrace -d 'Stop (and stop tracing) when a latency exceeds USEC µs; exit 1' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -l explain -d 'Explain messages later than USEC µs from the kernel\'s trace events: what ran on the receiver\'s CPU between the send and the receipt (a tracefs instance of rtbench\'s own; root). Each new maximum is explained, the others up to 4 a second per CPU; every one is counted by its cause in the closing `# Causes:` block. -b explains the sample that stops the run' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -s h -l histogram -d 'Latency histogram of US buckets (1 µs, or 1 ns with -N), printed at exit' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -s l -l loops -d 'Number of messages (cycles) per pair; 0 = endless' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -s p -l priority -d 'Priority (1..99 SCHED_FIFO; 0 = SCHED_OTHER); default 98' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -s t -l threads -d 'Number of pairs; without NUM one per online CPU' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -s T -l timeout -d 'Receive with a timeout of TO seconds; each timeout is counted, the wait goes on' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -s f -l forcetimeout -d 'Force timeouts: the sender waits TO seconds before each message (needs -T)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -l msg-size -d 'Message size in bytes: 32 carry the stamps, the rest is padding; pipe up to PIPE_BUF (4096, pipe(7)), pmq up to /proc/sys/fs/mqueue/msgsize_max (mq_overview(7))' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -s D -l duration -d 'Run time: N seconds, or with suffix s, m, h, d (e.g. 10s, 5m, 12h)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -l json -d 'Write results as JSON (rt-tests file_version 1 plus an "rtbench" object); - for stdout' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -l mainaffinity -d 'CPUs for the main thread (default: first housekeeping CPU)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -l report-interval -d 'Seconds between live report blocks (without -q)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -l latency -d 'PM QoS latency target written to /dev/cpu_dma_latency, in µs' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -l load -d 'Built-in load: cpu:N (busy loops), vm:N:SIZE (allocate, touch, free SIZE bytes, e.g. 64M), io:N (write + fsync an unlinked temp file in $TMPDIR); comma-separated' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -l load-cmd -d 'External load command, e.g. "stress-ng --cpu 2" or "iperf3 -c host -t 0" (split like a shell would, no expansion); its output goes to standard error' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -l load-cpus -d 'CPUs the load runs on (default: all online CPUs)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -s S -l smp -d 'SMP testing: -a -t and the same priority for all pairs'
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -l no-mlockall -d 'Do not call mlockall'
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -s N -l nsecs -d 'Print results in ns instead of µs'
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -s q -l quiet -d 'Print only a summary at exit'
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -l default-system -d 'Leave /dev/cpu_dma_latency alone'
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand pmq" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -s i -l interval -d 'Pause between round trips in µs (default 1000, as pmqtest -i; 0: back to back, as perf bench sched pipe, which at SCHED_FIFO measures RT throttling)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -s d -l distance -d 'Distance of pair pauses in µs (pair i: interval + i*DIST)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -s a -l affinity -d 'Pin: pair N on CPU N without CPUSET, else round-robin over CPUSET (a single CPU pins every pair there, as pmqtest -a NUM); both ends of a pair share the CPU' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -s b -l breaktrace -d 'Stop (and stop tracing) when a latency exceeds USEC µs; exit 1' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -l explain -d 'Explain messages later than USEC µs from the kernel\'s trace events: what ran on the receiver\'s CPU between the send and the receipt (a tracefs instance of rtbench\'s own; root). Each new maximum is explained, the others up to 4 a second per CPU; every one is counted by its cause in the closing `# Causes:` block. -b explains the sample that stops the run' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -s h -l histogram -d 'Latency histogram of US buckets (1 µs, or 1 ns with -N), printed at exit' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -s l -l loops -d 'Number of messages (cycles) per pair; 0 = endless' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -s p -l priority -d 'Priority (1..99 SCHED_FIFO; 0 = SCHED_OTHER); default 98' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -s t -l threads -d 'Number of pairs; without NUM one per online CPU' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -s T -l timeout -d 'Receive with a timeout of TO seconds; each timeout is counted, the wait goes on' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -s f -l forcetimeout -d 'Force timeouts: the sender waits TO seconds before each message (needs -T)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -l msg-size -d 'Message size in bytes: 32 carry the stamps, the rest is padding; pipe up to PIPE_BUF (4096, pipe(7)), pmq up to /proc/sys/fs/mqueue/msgsize_max (mq_overview(7))' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -s D -l duration -d 'Run time: N seconds, or with suffix s, m, h, d (e.g. 10s, 5m, 12h)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -l json -d 'Write results as JSON (rt-tests file_version 1 plus an "rtbench" object); - for stdout' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -l mainaffinity -d 'CPUs for the main thread (default: first housekeeping CPU)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -l report-interval -d 'Seconds between live report blocks (without -q)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -l latency -d 'PM QoS latency target written to /dev/cpu_dma_latency, in µs' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -l load -d 'Built-in load: cpu:N (busy loops), vm:N:SIZE (allocate, touch, free SIZE bytes, e.g. 64M), io:N (write + fsync an unlinked temp file in $TMPDIR); comma-separated' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -l load-cmd -d 'External load command, e.g. "stress-ng --cpu 2" or "iperf3 -c host -t 0" (split like a shell would, no expansion); its output goes to standard error' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -l load-cpus -d 'CPUs the load runs on (default: all online CPUs)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -l fork -d 'Run the receiving end of each pair in a child process (perf\'s default) instead of a thread'
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -s S -l smp -d 'SMP testing: -a -t and the same priority for all pairs'
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -l no-mlockall -d 'Do not call mlockall'
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -s N -l nsecs -d 'Print results in ns instead of µs'
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -s q -l quiet -d 'Print only a summary at exit'
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -l default-system -d 'Leave /dev/cpu_dma_latency alone'
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand pipe" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand oslat" -s b -l bucket-size -d 'Number of buckets (4..1024; oslat\'s default 32)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand oslat" -s c -l cpu-list -d 'CPUs to poll, one thread each (cpu-list like 1,3,5-7; default: every allowed CPU)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand oslat" -s C -l cpu-main-thread -d 'CPU of the main thread (default: a housekeeping CPU beside the polled ones)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand oslat" -s D -l duration -d 'Run time: N seconds, or with suffix s, m, h, d (oslat\'s default 1 s)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand oslat" -l json -d 'Write results as JSON (rt-tests\' layout plus an "rtbench" object); - for stdout' -r -F
complete -c rtbench -n "__fish_rtbench_using_subcommand oslat" -s f -l rtprio -d 'SCHED_FIFO priority of the polling threads (1..99; default SCHED_OTHER)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand oslat" -s m -l workload-mem -d 'Workload memory per thread (e.g. 4K, 1M; default 16K), with -w memmove' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand oslat" -s T -l trace-threshold -d 'Stop the test when a gap reaches US µs: a marker in the trace, tracing stopped' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand oslat" -s w -l workload -d 'Workload between two reads: no (default) or memmove' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand oslat" -s W -l bucket-width -d 'Bucket width in ns (default 1000; not a multiple of 1000: ns precision output)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand oslat" -l explain -d 'Explain gaps over USEC µs from the kernel\'s trace events: what ran on the polled CPU in the gap (a tracefs instance of rtbench\'s own; root). Each new maximum is explained, the others up to 4 a second per CPU; every one is counted by its cause in the closing `# Causes:` block' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand oslat" -s B -l bias -d 'Subtract the smallest pre-heat latency from every gap before bucketing'
complete -c rtbench -n "__fish_rtbench_using_subcommand oslat" -s q -l quiet -d 'Print only the summary at exit'
complete -c rtbench -n "__fish_rtbench_using_subcommand oslat" -s s -l single-preheat -d 'Pre-heat with the first thread only'
complete -c rtbench -n "__fish_rtbench_using_subcommand oslat" -s v -l version -d 'Print oslat\'s version line and exit'
complete -c rtbench -n "__fish_rtbench_using_subcommand oslat" -s z -l zero-omit -d 'Leave all-zero buckets out of the histogram ("    ..." stands for them)'
complete -c rtbench -n "__fish_rtbench_using_subcommand oslat" -l no-mlockall -d 'Do not call mlockall'
complete -c rtbench -n "__fish_rtbench_using_subcommand oslat" -s h -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand load" -s D -l duration -d 'How long: N seconds, or with suffix s, m, h, d (default: until SIGINT/SIGTERM/SIGHUP)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand load" -l load -d 'Built-in load: cpu:N (busy loops), vm:N:SIZE (allocate, touch, free SIZE bytes, e.g. 64M), io:N (write + fsync an unlinked temp file in $TMPDIR); comma-separated' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand load" -l load-cmd -d 'External load command, e.g. "stress-ng --cpu 2" or "iperf3 -c host -t 0" (split like a shell would, no expansion); its output goes to standard error' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand load" -l load-cpus -d 'CPUs the load runs on (default: all online CPUs)' -r
complete -c rtbench -n "__fish_rtbench_using_subcommand load" -s h -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand load" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand load-worker" -s h -l help -d 'Print help'
complete -c rtbench -n "__fish_rtbench_using_subcommand load-worker" -s V -l version -d 'Print version'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and not __fish_seen_subcommand_from cyclic sysinfo selftest monitor diagnose report plot compare config tune pmq pipe oslat load load-worker help" -f -a "cyclic" -d 'Timer-wakeup latency, cyclictest-compatible (flags, T: lines, -h dump, --json)'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and not __fish_seen_subcommand_from cyclic sysinfo selftest monitor diagnose report plot compare config tune pmq pipe oslat load load-worker help" -f -a "sysinfo" -d 'Print the system snapshot: kernel, PREEMPT_RT, isolated/housekeeping CPUs'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and not __fish_seen_subcommand_from cyclic sysinfo selftest monitor diagnose report plot compare config tune pmq pipe oslat load load-worker help" -f -a "selftest" -d 'Boot self-test: tune, measure under load, judge the limits, report (rtbench.service)'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and not __fish_seen_subcommand_from cyclic sysinfo selftest monitor diagnose report plot compare config tune pmq pipe oslat load load-worker help" -f -a "monitor" -d 'Long-running latency monitoring for the field: one journal entry per CPU per window'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and not __fish_seen_subcommand_from cyclic sysinfo selftest monitor diagnose report plot compare config tune pmq pipe oslat load load-worker help" -f -a "diagnose" -d 'Collect a diagnostics bundle (.tar.gz) for a field engineer: results, windows, tuning, system snapshot, journal; SUMMARY.txt says what looks wrong'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and not __fish_seen_subcommand_from cyclic sysinfo selftest monitor diagnose report plot compare config tune pmq pipe oslat load load-worker help" -f -a "report" -d 'Show stored self-test results: the last verdict and table, or all kept runs'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and not __fish_seen_subcommand_from cyclic sysinfo selftest monitor diagnose report plot compare config tune pmq pipe oslat load load-worker help" -f -a "plot" -d 'Draw a latency plot (SVG, one curve per CPU, log count axis) from a result'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and not __fish_seen_subcommand_from cyclic sysinfo selftest monitor diagnose report plot compare config tune pmq pipe oslat load load-worker help" -f -a "compare" -d 'Compare runs (stored results, --json, -h dumps): per test, CPU and statistic, equivalent, regression, improvement or inconclusive; what differs between them'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and not __fish_seen_subcommand_from cyclic sysinfo selftest monitor diagnose report plot compare config tune pmq pipe oslat load load-worker help" -f -a "config" -d 'Print the configuration template, or check a configuration file without running anything'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and not __fish_seen_subcommand_from cyclic sysinfo selftest monitor diagnose report plot compare config tune pmq pipe oslat load load-worker help" -f -a "tune" -d 'Check, apply, revert or show the RT tuning of the configuration\'s [tuning]'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and not __fish_seen_subcommand_from cyclic sysinfo selftest monitor diagnose report plot compare config tune pmq pipe oslat load load-worker help" -f -a "pmq" -d 'POSIX message-queue latency between thread pairs, pmqtest-compatible'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and not __fish_seen_subcommand_from cyclic sysinfo selftest monitor diagnose report plot compare config tune pmq pipe oslat load load-worker help" -f -a "pipe" -d 'Task-switch latency: pipe ping-pong between two threads or processes'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and not __fish_seen_subcommand_from cyclic sysinfo selftest monitor diagnose report plot compare config tune pmq pipe oslat load load-worker help" -f -a "oslat" -d 'Busy-poll noise of (isolated) CPUs, oslat-compatible (flags, per-CPU table, --json)'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and not __fish_seen_subcommand_from cyclic sysinfo selftest monitor diagnose report plot compare config tune pmq pipe oslat load load-worker help" -f -a "load" -d 'Run only the background load (--load/--load-cmd) for -D TIME'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and not __fish_seen_subcommand_from cyclic sysinfo selftest monitor diagnose report plot compare config tune pmq pipe oslat load load-worker help" -f -a "load-worker" -d 'Internal: one built-in load worker process (started by --load)'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and not __fish_seen_subcommand_from cyclic sysinfo selftest monitor diagnose report plot compare config tune pmq pipe oslat load load-worker help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "template" -d 'Print the configuration template: every key, its default and what it does'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and __fish_seen_subcommand_from config" -f -a "check" -d 'Validate a configuration file against this machine\'s CPUs; run nothing, write nothing'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and __fish_seen_subcommand_from tune" -f -a "check" -d 'Compare the kernel\'s effective state with [tuning] (no file: the generic real-time audit); write nothing'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and __fish_seen_subcommand_from tune" -f -a "apply" -d 'Change what differs as a transaction (journal in /run/rtbench, rollback on failure)'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and __fish_seen_subcommand_from tune" -f -a "revert" -d 'Restore every value recorded by the last committed apply'
complete -c rtbench -n "__fish_rtbench_using_subcommand help; and __fish_seen_subcommand_from tune" -f -a "status" -d 'Show the journal: state and recorded changes'
