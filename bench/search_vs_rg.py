# hunk search against ripgrep on the tree of the current directory: each
# case interleaved (rg, hunk, rg, hunk, ...), the medians of N runs (the
# argument; 9 unless given). Both get the path "." and no stdin (ripgrep
# searches stdin when it is not a terminal and no path is given), and their
# output is read through a pipe (ripgrep stops at the first match when
# stdout is /dev/null). Run from GOROOT/src: python3 bench/search_vs_rg.py 11
import subprocess,time,sys
def t(cmd):
    s=time.perf_counter(); p=subprocess.run(cmd,capture_output=True,stdin=subprocess.DEVNULL); return time.perf_counter()-s, p.stdout.count(b"\n")
cases=[("literal",["func main"]),("regexp",[r"func \(\w+ \*\w+\) [A-Z]\w*\("]),("none",["zzqqxxyy-no-such-text"]),("ignorecase",["-i","deadline exceeded"]),("word",["-w","err"])]
for name,args in cases:
    a=[];b=[]
    for i in range(int(sys.argv[1]) if len(sys.argv)>1 else 9):
        x,n1=t(["rg","-c"]+args+["."]); y,n2=t(["hunk","search","-c","--limit","0"]+args+["."]); a.append(x); b.append(y)
    a.sort();b.sort()
    m=len(a)//2
    print("%-10s rg %.0f ms (%d files)  hunk %.0f ms (%d)  ratio %.2f"%(name,a[m]*1000,n1,b[m]*1000,n2,b[m]/a[m]))
