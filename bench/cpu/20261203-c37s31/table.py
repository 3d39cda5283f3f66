# Issue #37's LLM table from call.sh's run.log: only rounds in which both tools ran (paired), medians of the rounds'
# -r 3 means, the ratio of medians and the per-round ratios' median and range; decode and prefill scaling 2 -> 16.
import re,sys,collections,statistics as st
d=collections.defaultdict(dict)
for l in open(sys.argv[1]):
    m=re.match(r'RUN T=(\d+) F=(\d+) round=(\d+) (\S+): (.*)',l)
    if m:
        for t,v in re.findall(r'(pp512|tg128) t=\d+ t/s: ([\d. ]+)',m[5]):
            d[((int(m[1]),int(m[2])),t,m[4])][int(m[3])]=st.mean(float(x) for x in v.split())
med={}
print('| threads (CPUs) | test | Hark | llama.cpp | Hark/llama.cpp (ratio of medians) | by round: median (min-max), paired rounds |')
print('|---|---|---:|---:|---:|---|')
for T in ((2,0),(2,2),(4,0),(8,0),(16,0)):
    for t in ('tg128','pp512'):
        a,c=d[(T,t,'hark')],d[(T,t,'llama')]
        rs=[r for r in a if r in c]
        if not rs: continue
        ma,mc=st.median(a[r] for r in rs),st.median(c[r] for r in rs); med[(T,t)]=(ma,mc)
        q=[a[r]/c[r] for r in rs]
        cpus='0-%d'%(T[0]-1) if T[0]<16 else 'all'
        if T==(2,2): cpus='2-3'
        print('| %d (%s) | %s | %.1f | %.1f | **%.2f** | %.2f (%.2f-%.2f), %d |'%(T[0],cpus,t,ma,mc,ma/mc,st.median(q),min(q),max(q),len(q)))
for t in ('tg128','pp512'):
    a2,c2=med[((2,0),t)]; a16,c16=med[((16,0),t)]
    print('%s scaling 2 (CPUs 0-1) -> 16 threads: Hark %.2fx, llama.cpp %.2fx'%(t,a16/a2,c16/c2))
