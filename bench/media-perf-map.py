#!/usr/bin/env python3
# A packet's CPU by kind of work, from a bench/media run recorded with BENCH_MEDIA_PERF (session 26):
#   perf script -i <run>.data -F tid,ip,sym,dso > run.script
#   python3 bench/media-perf-map.py run.script <tids, comma-separated> <the run's µs per packet> [-v]
# Each sample goes to the first rule its call chain matches (the rules run from the most specific);
# the µs per packet are the run's own figure times the category's share of ALL the process's
# samples, so the threads' figures add up to it. The media workers are the two busiest threads
# after the main thread (its tid is the process id); -v lists what fell to "other".
import sys, re, collections
fn=sys.argv[1]; tids=[int(x) for x in sys.argv[2].split(',')]; per_packet_us=float(sys.argv[3]) if len(sys.argv)>3 else None
samples=[]; cur=None
for line in open(fn, errors='replace'):
    line=line.rstrip('\n')
    if not line.strip():
        if cur: samples.append(cur); cur=None
        continue
    if not line.startswith('\t') and not line.startswith(' '*8):
        cur=(int(line.split()[0]), []); continue
    m=re.match(r'\s*([0-9a-f]+)\s+(.*)\s+\((.*)\)$', line)
    if m and cur is not None: cur[1].append((re.sub(r"file://[^ ]*/", "", m.group(2)), m.group(3)))
if cur: samples.append(cur)
total=len(samples)
for tid, count in collections.Counter(t for t, _ in samples).most_common(6): print(f'thread {tid}: {count} samples ({100*count/total:.1f}%)')
sel=[s for s in samples if s[0] in tids]
def has(ch, pat): return any(re.search(pat, s) for s,d in ch)
RULES=[
 ('perf-basic-prof map writes', lambda ch,leafk: has(ch, r'PerfBasicLogger|LogRecordedBuffer|CodeEventLogger')),
 ('GC', lambda ch,leafk: has(ch, r'Heap::|Scavenge|MarkCompact|GCTracer|MinorMarkCompact|ConcurrentMarking|Sweeper')),
 ('compile (TurboFan/Maglev/baseline)', lambda ch,leafk: has(ch, r'compiler::|Compiler::|Pipeline|OptimizedCompilationJob|Baseline.*Compil|Maglev')),
 # receive
 ('recv: consent/STUN (ours, werift)', lambda ch,leafk: has(ch, r'OnRecv') and has(ch, r'JS:.datagram direct-rtp|#answer|#answered|datagramReceived|parseMessage|stun\.ts|StunScan|werift/lib/ice')),
 ('recv: SRTP unprotect', lambda ch,leafk: has(ch, r'JS:.unprotect srtp')),
 ('recv: leg #receive (seq, decode, ring)', lambda ch,leafk: has(ch, r'JS:.#receive leg')),
 ('recv: our onData, parseRtp', lambda ch,leafk: has(ch, r'transport\.onData direct-rtp')),
 ('recv: werift transport listener', lambda ch,leafk: has(ch, r'werift/lib/common/src/transport\.js')),
 ('recv: dgram onMessage JS', lambda ch,leafk: has(ch, r'onMessage node:dgram')),
 ('recv: kernel recvmsg', lambda ch,leafk: has(ch, r'recvmsg')),
 ('recv: Node C++ buffer alloc/free (malloc, OnAlloc)', lambda ch,leafk: has(ch, r'OnAlloc|allocate_managed_buffer|BackingStore') or re.search(r'malloc|_int_free|unlink_chunk|^free$|cfree|malloc_consolidate', ch[0][0] if ch else '')),
 ('recv: Node C++ (OnRecv, rinfo, buffer)', lambda ch,leafk: has(ch, r'OnRecv')),
 # send
 ('send: SRTP protect', lambda ch,leafk: has(ch, r'JS:.protect srtp')),
 ('send: consent requests (#due)', lambda ch,leafk: has(ch, r'JS:.#due direct-rtp|#request direct')),
 ('send: kernel sendmsg', lambda ch,leafk: has(ch, r'sendmsg|UDPWrap::DoSend|UDPWrap::Send|uv_udp_try_send')),
 ('send: dgram JS (send, lookup, afterDns, doSend, callback)', lambda ch,leafk: has(ch, r'node:dgram|node:dns|node:internal/dgram|afterSend|JS:.lookup')),
 ('tick: #sendFrame (encode, header)', lambda ch,leafk: has(ch, r'#sendFrame leg')),
 ('tick: #tick rest (source read copy, receive buffer)', lambda ch,leafk: has(ch, r'#tick leg')),
 ('tick machinery (WorkerClock, waitAsync, counters)', lambda ch,leafk: has(ch, r'tick-share|writeCounters|leg-memory')),
 ('nextTick queue other', lambda ch,leafk: has(ch, r'processTicksAndRejections')),
 ('timers other', lambda ch,leafk: has(ch, r'RunTimers|listOnTimeout')),
 ('event loop wait/poll (kernel)', lambda ch,leafk: has(ch, r'epoll') ),
 ('messages (MessagePort)', lambda ch,leafk: has(ch, r'MessagePort')),
]
cats=collections.Counter(); other=collections.Counter()
for t,ch in sel:
    leafk = ch[0][1] if ch else ''
    for name,f in RULES:
        if f(ch,leafk): cats[name]+=1; break
    else:
        cats['other']+=1
        other[' < '.join(s[:60] for s,d in ch[:4])]+=1
n=len(sel)
print(f'threads {tids}: {n} samples of {total} ({100*n/total:.1f}%)')
for k,v in sorted(cats.items(), key=lambda x:-x[1]):
    us = f'  ~{per_packet_us*v/total:.2f} µs/packet' if per_packet_us else ''
    print(f'{v:6d} {100*v/n:5.1f}%{us}  {k}')
if '-v' in sys.argv:
    for k,v in other.most_common(25): print('   other', v, k)
