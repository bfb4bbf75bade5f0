package dev.fencing.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where the agent's resident memory goes: the idle hello-world JVM of {@link StartupBench}, with and without the agent,
 * under Native Memory Tracking; per NMT category the committed memory, plus the Java heap actually used, the loaded
 * classes and RSS. NMT's committed is not resident (the heap is committed at its initial size either way): the rows
 * that explain RSS are heap used, metaspace/class space, symbols, threads and malloc'ed categories.
 *
 * <p>Usage: NmtBench &lt;agent jar&gt; &lt;java home&gt; [rounds, default 3] (medians, alternating A/B)
 */
public final class NmtBench {
  private static final Pattern CATEGORY = Pattern.compile("^-\\s+(.+?) \\(reserved=\\d+KB, committed=(\\d+)KB\\)");
  /** Java 17: "total 397312K, used 5003K"; Java 25: "total reserved 6160384K, committed 393216K, used 5120K". */
  private static final Pattern HEAP_USED = Pattern.compile("heap.*?used (\\d+)K");
  private static final Pattern LOADED = Pattern.compile("java\\.cls\\.loadedClasses=(\\d+)");
  /** Later than StartupBench's 3 s: the agent's start-up work (and the JIT compiling it) has settled. */
  private static final long SETTLE_MILLIS = 5000;

  private NmtBench() {}

  public static void main(String[] args) throws Exception {
    Path agentJar = Path.of(args[0]);
    Path javaHome = Path.of(args[1]);
    String classPath = Path.of(Hello.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    List<Map<String, Long>> nones = new ArrayList<>();
    List<Map<String, Long>> agents = new ArrayList<>();
    for (int r = 0; r < rounds; r++) {
      nones.add(sample(javaHome, agentJar, classPath, false));
      agents.add(sample(javaHome, agentJar, classPath, true));
    }
    Map<String, Long> none = medians(nones);
    Map<String, Long> agent = medians(agents);
    System.out.println("| what (KB, idle hello world) | no agent | agent | added |");
    System.out.println("|---|---:|---:|---:|");
    for (String k : agent.keySet()) {
      long a = none.getOrDefault(k, 0L);
      long b = agent.get(k);
      if (a != 0 || b != 0) {
        System.out.printf(Locale.ROOT, "| %s | %d | %d | %+d |%n", k, a, b, b - a);
      }
    }
  }

  private static Map<String, Long> medians(List<Map<String, Long>> samples) {
    Map<String, Long> m = new LinkedHashMap<>();
    for (String k : samples.get(samples.size() - 1).keySet()) {
      long[] v = samples.stream().mapToLong(x -> x.getOrDefault(k, 0L)).sorted().toArray();
      m.put(k, v[v.length / 2]);
    }
    return m;
  }

  private static Map<String, Long> sample(Path javaHome, Path agentJar, String classPath, boolean agent)
      throws Exception {
    List<String> c = new ArrayList<>(List.of(javaHome.resolve("bin/java").toString(),
        "-XX:NativeMemoryTracking=summary"));
    if (agent) {
      c.add("-javaagent:" + agentJar);
      c.add("-Dfencing.lock=bench-nmt");
      c.add("-Dfencing.etcd.endpoints=http://127.0.0.1:" + StartupBench.freePort()); // nothing listens there
    }
    c.addAll(List.of("-cp", classPath, Hello.class.getName(), "idle"));
    Process p = new ProcessBuilder(c).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    try {
      BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      String line;
      while ((line = r.readLine()) != null && !line.equals("hello, world")) {
        // skip main-at
      }
      Thread.sleep(SETTLE_MILLIS);
      Map<String, Long> m = new LinkedHashMap<>();
      for (String s : Files.readAllLines(Path.of("/proc", Long.toString(p.pid()), "status"))) {
        if (s.startsWith("VmRSS:")) {
          m.put("RSS", Long.parseLong(s.replaceAll("\\D", "")));
        }
      }
      Matcher heap = HEAP_USED.matcher(jcmd(javaHome, p.pid(), "GC.heap_info"));
      m.put("Java heap used", heap.find() ? Long.parseLong(heap.group(1)) : -1);
      Matcher classes = LOADED.matcher(jcmd(javaHome, p.pid(), "PerfCounter.print"));
      m.put("classes loaded (count)", classes.find() ? Long.parseLong(classes.group(1)) : -1);
      for (String s : jcmd(javaHome, p.pid(), "VM.native_memory", "summary", "scale=KB").split("\n")) {
        Matcher cat = CATEGORY.matcher(s.trim().startsWith("-") ? s.trim() : "");
        if (cat.find()) {
          m.put("NMT committed: " + cat.group(1).trim(), Long.parseLong(cat.group(2)));
        }
      }
      return m;
    } finally {
      p.destroyForcibly();
      p.waitFor(10, TimeUnit.SECONDS);
    }
  }

  private static String jcmd(Path javaHome, long pid, String... command) throws Exception {
    List<String> c = new ArrayList<>(List.of(javaHome.resolve("bin/jcmd").toString(), Long.toString(pid)));
    c.addAll(List.of(command));
    Process p = new ProcessBuilder(c).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    p.waitFor(30, TimeUnit.SECONDS);
    return out;
  }
}
