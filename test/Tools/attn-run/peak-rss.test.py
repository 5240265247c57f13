import resource
import subprocess
import sys

cmd = [sys.argv[1], "--sdpa", "b=1,hq=2,lq=65536,d=64", "--check", "none",
       "--threads", "2"]
subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
rss_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
io_mib = 4 * 1 * 2 * 65536 * 64 * 4 / 2**20
extra = rss_mib - io_mib
verdict = "within" if extra <= 192 else "over"
print(f"peak RSS {rss_mib:.0f} MiB for {io_mib:.0f} MiB of inputs and output: "
      f"{verdict} 192 MiB (extra {extra:.0f} MiB)")
