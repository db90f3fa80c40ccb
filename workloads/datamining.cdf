# Flow sizes of the data-mining workload (Greenberg et al., "VL2: A Scalable and Flexible Data
# Center Network", SIGCOMM 2009, Figure 2: flow sizes in a production data-mining cluster), as
# the points tabulated by the HKUST TrafficGenerator (conf/VL2_CDF.txt, used by PIAS, Bai et
# al., NSDI 2015) and by CONGA-style load-balancing simulations. Columns: flow size in bytes,
# cumulative probability. Between two points the CDF is linear.
0 0
180 0.1
216 0.2
560 0.3
900 0.4
1100 0.5
1870 0.6
3160 0.7
10000 0.8
400000 0.9
3160000 0.95
100000000 0.98
1000000000 1
