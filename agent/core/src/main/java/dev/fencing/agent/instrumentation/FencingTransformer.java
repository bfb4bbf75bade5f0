package dev.fencing.agent.instrumentation;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import dev.fencing.agent.instrumentation.api.WeakIdentityCache;
import dev.fencing.agent.log.AgentLog;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.nio.charset.StandardCharsets;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.List;
import net.bytebuddy.ByteBuddy;
import net.bytebuddy.asm.Advice;
import net.bytebuddy.asm.AsmVisitorWrapper;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.dynamic.ClassFileLocator;
import net.bytebuddy.dynamic.DynamicType;
import net.bytebuddy.dynamic.scaffold.InstrumentedType;
import net.bytebuddy.dynamic.scaffold.MethodGraph;
import net.bytebuddy.dynamic.scaffold.TypeValidation;
import net.bytebuddy.implementation.Implementation;
import net.bytebuddy.matcher.ElementMatcher;
import net.bytebuddy.pool.TypePool;

/**
 * The agent's one ClassFileTransformer. Deliberately not ByteBuddy's AgentBuilder: building one generates a
 * transformer class at run time, which cost ~450 ms of premain; this class registers in microseconds, and ByteBuddy
 * itself only loads when the application loads a class worth instrumenting.
 *
 * <p>Per loaded class: a byte search for each instrumentation's marker (no parsing, no allocation) rejects nearly
 * everything; candidates are described through a type pool (the class's bytes plus its loader's resources, so no
 * class is loaded early), matched, and the advice is inlined without changing the class format (retransformable).
 */
final class FencingTransformer implements ClassFileTransformer {
  private static final AgentLog LOG = AgentLog.get(FencingTransformer.class);

  /**
   * One type instrumentation: its marker now, its matchers and advice on first use (building ByteBuddy matchers
   * loads ByteBuddy, which premain must not pay for).
   */
  private static final class Entry {
    final TypeInstrumentation type;
    /** The internal name of the one class it can match ({@link TypeInstrumentation#className}), or null. */
    final String internalName;
    final byte[] marker;
    /** Internal names from {@link TypeInstrumentation#superTypeNames}, or null. */
    final java.util.Set<String> superTypes;
    /** Its marker's bit in {@link #markers}' answer; 0 when the marker is searched on its own (past MarkerSet.MAX). */
    long markerBit;
    private volatile ElementMatcher<TypeDescription> typeMatcher;
    private volatile List<AsmVisitorWrapper> visitors;

    Entry(TypeInstrumentation type) {
      this.type = type;
      String className = type.className();
      this.internalName = className == null ? null : className.replace('.', '/');
      this.marker = type.classFileMarker().getBytes(StandardCharsets.US_ASCII);
      java.util.Set<String> names = type.superTypeNames();
      if (names == null) {
        this.superTypes = null;
      } else {
        java.util.Set<String> internal = new java.util.HashSet<>();
        for (String n : names) {
          internal.add(n.replace('.', '/'));
        }
        this.superTypes = java.util.Set.copyOf(internal);
      }
    }

    boolean matches(TypeDescription td) {
      ElementMatcher<TypeDescription> m = typeMatcher;
      if (m == null) {
        m = type.typeMatcher();
        typeMatcher = m;
      }
      return m.matches(td);
    }

    List<AsmVisitorWrapper> visitors() {
      List<AsmVisitorWrapper> v = visitors;
      if (v == null) {
        ClassFileLocator agentClasses = ClassFileLocator.ForClassLoader.of(FencingTransformer.class.getClassLoader());
        // Advice described from its class file, never through reflection: reflection links (verifies) the advice
        // class in the agent's loader, which fails when its code uses the instrumented library's types (Kafka's
        // KafkaException passed as an Exception), classes only the application's loader can see.
        TypePool advicePool = TypePool.Default.WithLazyResolution.of(agentClasses);
        List<AsmVisitorWrapper> built = new ArrayList<>();
        type.transform((methods, advice) -> built.add(
            Advice.to(advicePool.describe(advice.getName()).resolve(), agentClasses).on(methods)));
        v = built;
        visitors = v;
      }
      return v;
    }
  }

  /**
   * Descriptions of the types already parsed, per class loader, shared by every class that loader defines. Candidates
   * are matched by super type (java.sql.Statement, jakarta.servlet.Filter...), and in a Spring Boot service ~500
   * classes name java/sql/ (Hibernate): without a cache each walked its whole hierarchy again, reading every super
   * type's class file through the loader (a search of ~100 nested jars each). Soft references: the JVM may drop it
   * under memory pressure; failed look-ups are not cached (a class file may appear later). The values hold the loader
   * only weakly (the locators and {@link LoadedFallbackPool} do), so a cache never keeps a loader alive.
   */
  private final WeakIdentityCache<ClassLoader, TypePool.CacheProvider> typeCaches = new WeakIdentityCache<>();
  private final TypePool.CacheProvider bootTypeCache = newTypeCache();

  private TypePool.CacheProvider typeCache(ClassLoader loader) {
    return loader == null ? bootTypeCache : typeCaches.computeIfAbsent(loader, l -> newTypeCache());
  }

  private static TypePool.CacheProvider newTypeCache() {
    return TypePool.CacheProvider.WithIllegalResolutionReattempt.of(new TypePool.CacheProvider.Simple.UsingSoftReference());
  }

  /** Rules out candidates by their hierarchy's class-file headers before ByteBuddy describes them. */
  private final SuperTypeFilter superTypeFilter = new SuperTypeFilter();

  /** Set while this thread transforms a class. */
  private static final ThreadLocal<Boolean> TRANSFORMING = new ThreadLocal<>();

  private final List<Entry> entries = new ArrayList<>();
  /** The markers of the entries that match by more than a name, searched in one pass per class. */
  private MarkerSet markers = new MarkerSet(List.of());
  /** True when some entry searched by marker considers boot classes (else boot classes skip the search). */
  private boolean bootMarkers;
  /** Counters of the class-load path, kept at fencing.log.level=debug only (null otherwise). */
  private final TransformerStats stats = LOG.debugEnabled() ? new TransformerStats() : null;
  /** Every bootstrap class that inlined advice names (Fencing first: the one a loader that hides them all fails). */
  private final BootstrapVisibility bootstrapVisibility = new BootstrapVisibility(
      dev.fencing.agent.bootstrap.Fencing.class, dev.fencing.agent.bootstrap.JdbcHook.class,
      dev.fencing.agent.bootstrap.JdbcCalls.class,
      dev.fencing.agent.bootstrap.HttpHook.class, dev.fencing.agent.bootstrap.KafkaHook.class,
      dev.fencing.agent.bootstrap.Decision.class, dev.fencing.agent.bootstrap.Channel.class,
      dev.fencing.agent.bootstrap.FencingBlockedException.class, dev.fencing.agent.bootstrap.TokenContext.class,
      dev.fencing.agent.bootstrap.ReentryGuard.class, dev.fencing.agent.bootstrap.CallDepth.class,
      dev.fencing.agent.bootstrap.WithoutFencingHeaders.class, dev.fencing.agent.bootstrap.Sections.class,
      dev.fencing.agent.bootstrap.HttpAttempt.class, dev.fencing.agent.bootstrap.RequestHeaders.class,
      dev.fencing.agent.bootstrap.KafkaSend.class, dev.fencing.agent.bootstrap.HeldBatches.class,
      dev.fencing.agent.bootstrap.FixedError.class);

  /** Premain only, before the transformer is registered. */
  void add(TypeInstrumentation type) {
    entries.add(new Entry(type));
    List<String> distinct = MarkerSet.newList();
    boolean boot = false;
    for (Entry e : entries) {
      e.markerBit = 0;
      if (e.internalName != null) {
        continue; // matched by its name: its marker is only checked on the class of that name
      }
      String m = e.type.classFileMarker();
      if (distinct.contains(m) || distinct.size() < MarkerSet.MAX) {
        e.markerBit = 1L << MarkerSet.indexOf(distinct, m);
      }
      boot |= e.type.bootstrapClasses();
    }
    markers = new MarkerSet(distinct);
    bootMarkers = boot;
  }

  boolean isEmpty() {
    return entries.isEmpty();
  }

  @Override
  public byte[] transform(Module module, ClassLoader loader, String internalName, Class<?> redefined,
      ProtectionDomain domain, byte[] bytes) {
    // The agent's own classes never; boot classes only for instrumentations that ask for them.
    if (internalName == null || internalName.startsWith("dev/fencing/agent/") || isOtherAgentLoader(loader)) {
      return null;
    }
    long start = stats == null ? 0 : System.nanoTime();
    List<Entry> candidates = candidates(loader, internalName, bytes);
    if (candidates == null) {
      if (stats != null) {
        stats.rejected(System.nanoTime() - start);
      }
      return null;
    }
    if (TRANSFORMING.get() != null) {
      // A class loaded while this thread instruments another (ByteBuddy initialising itself, say): transforming it
      // now would re-enter ByteBuddy half-initialised. It loads unchanged.
      return null;
    }
    String name = internalName.replace('/', '.');
    TRANSFORMING.set(Boolean.TRUE);
    try {
      // Reading super types' headers may make the loader load classes: done with TRANSFORMING set.
      candidates = bySuperTypes(loader, bytes, candidates);
      if (candidates == null) {
        if (stats != null) {
          stats.ruledOutByHeaders(System.nanoTime() - start);
        }
        return null;
      }
      ClassFileLocator locator = new ClassFileLocator.Compound(ClassFileLocator.Simple.of(name, bytes),
          loader == null ? ClassFileLocator.ForClassLoader.ofBootLoader()
              : ClassFileLocator.ForClassLoader.WeaklyReferenced.of(loader));
      TypeDescription type = new LoadedFallbackPool(typeCache(loader), locator, loader).describe(name).resolve();
      DynamicType.Builder<?> builder = null;
      for (Entry e : candidates) {
        if (!e.matches(type)) {
          continue;
        }
        if (e.type.inlinesBootstrapClasses() && !bootstrapVisibility.sees(loader)) {
          // Its advice would throw NoClassDefFoundError inside the application's own call: the class stays as it
          // is (logged once per loader). Checked with TRANSFORMING set, as the check may make the loader load classes.
          continue;
        }
        if (builder == null) {
          builder = byteBuddy().redefine(type, locator);
        }
        for (AsmVisitorWrapper v : e.visitors()) {
          builder = builder.visit(v);
        }
      }
      if (builder == null) {
        if (stats != null) {
          stats.parsed(System.nanoTime() - start, false, names(candidates));
        }
        return null;
      }
      byte[] transformed = builder.make().getBytes();
      if (stats != null) {
        stats.parsed(System.nanoTime() - start, true, names(candidates));
      }
      if (LOG.debugEnabled()) {
        LOG.debug("instrumented " + name + (loader == null ? "" : " (" + loader.getClass().getName() + ")"));
      }
      return transformed;
    } catch (Throwable t) {
      // The agent's problem, never the application's: the class loads unchanged.
      LOG.warn("could not instrument " + name, t);
      return null;
    } finally {
      TRANSFORMING.remove();
    }
  }

  /**
   * The candidates left once those whose super types the class cannot have ({@link SuperTypeFilter}) are dropped, or
   * null when none is left. Candidates without such a filter always stay.
   */
  private List<Entry> bySuperTypes(ClassLoader loader, byte[] bytes, List<Entry> candidates) {
    List<Entry> kept = null;
    SuperTypeFilter.Header header = null;
    boolean parsed = false;
    for (int i = 0; i < candidates.size(); i++) {
      Entry e = candidates.get(i);
      if (e.superTypes != null && !parsed) {
        header = SuperTypeFilter.parse(bytes);
        parsed = true;
      }
      if (e.superTypes == null || mayHaveSuperType(loader, header, e.superTypes)) {
        if (kept == null) {
          kept = new ArrayList<>(candidates.size() - i);
        }
        kept.add(e);
      }
    }
    return kept;
  }

  /** The filter's answer; true when it fails (the full matcher decides, as without the filter). */
  private boolean mayHaveSuperType(ClassLoader loader, SuperTypeFilter.Header header, java.util.Set<String> wanted) {
    try {
      return superTypeFilter.mayHaveSuperType(loader, header, wanted);
    } catch (RuntimeException | LinkageError e) {
      return true;
    }
  }

  private static List<String> names(List<Entry> entries) {
    List<String> names = new ArrayList<>(entries.size());
    for (Entry e : entries) {
      names.add(e.type.getClass().getSimpleName());
    }
    return names;
  }

  /**
   * The entries that may match this class, in installation order (the order their advice is applied in), or null.
   * Instrumentations of one class by name compare the name (no search); the others' markers are searched in one
   * pass, and only when some of them applies to this loader.
   */
  private List<Entry> candidates(ClassLoader loader, String internalName, byte[] bytes) {
    List<Entry> candidates = null;
    long found = 0;
    boolean searched = false;
    for (Entry e : entries) {
      if (loader == null && !e.type.bootstrapClasses()) {
        continue;
      }
      boolean candidate;
      if (e.internalName != null) {
        candidate = e.internalName.equals(internalName) && contains(bytes, e.marker);
      } else if (e.markerBit != 0) {
        if (!searched) {
          found = loader == null && !bootMarkers ? 0 : markers.find(bytes);
          searched = true;
        }
        candidate = (found & e.markerBit) != 0;
      } else {
        candidate = contains(bytes, e.marker);
      }
      if (candidate) {
        if (candidates == null) {
          candidates = new ArrayList<>(2);
        }
        candidates.add(e);
      }
    }
    return candidates;
  }

  /**
   * The OpenTelemetry Java agent's own class loaders (agent, extensions): they hold an unshaded OkHttp its OTLP
   * exporter sends with. Instrumenting it would tag that telemetry and, worse, block it whenever the lease is gone.
   * Like our own traffic (AgentThread), another agent's traffic is no side effect of the application.
   */
  static boolean isOtherAgentLoader(ClassLoader loader) {
    return loader != null && loader.getClass().getName().startsWith(OTEL_AGENT_PACKAGE);
  }

  /** Built at run time: the shade plugin would relocate a string constant naming io.opentelemetry. */
  private static final String OTEL_AGENT_PACKAGE = String.join(".", "io", "opentelemetry", "javaagent", "");

  /** ByteBuddy configured not to change the class format, so retransformation (dynamic attach) works too. */
  static ByteBuddy byteBuddy() {
    return new ByteBuddy()
        .with(TypeValidation.DISABLED)
        .with(Implementation.Context.Disabled.Factory.INSTANCE)
        .with(MethodGraph.Compiler.ForDeclaredMethods.INSTANCE)
        .with(InstrumentedType.Factory.Default.FROZEN);
  }

  /**
   * Loads and initialises what the first instrumented class would (ByteBuddy's matchers, type pool, advice and class
   * writer: ~900 classes, a second or more of one core on a small machine), on the agent's own thread at premain.
   * Without it the application's main thread pays that inside its first JDBC, executor or class-loader class, on
   * the startup's critical path; here it overlaps with the JVM's and the framework's own single-threaded startup. A
   * tiny class of the agent's own is matched by every instrumentation and woven with one instrumentation's advice
   * into bytes that are never loaded; reading every instrumentation's advice here instead (80 advice classes, most
   * for libraries an application does not have) cost a hello world holding a lease ~0.5 s of CPU and ~13 MB. Never
   * throws.
   */
  void warmUp() {
    try {
      String name = WarmUpTarget.class.getName();
      byte[] bytes;
      try (java.io.InputStream in = FencingTransformer.class.getResourceAsStream(
          "/" + name.replace('.', '/') + ".class")) {
        if (in == null) {
          return;
        }
        bytes = in.readAllBytes();
      }
      ClassLoader loader = FencingTransformer.class.getClassLoader();
      ClassFileLocator locator = new ClassFileLocator.Compound(ClassFileLocator.Simple.of(name, bytes),
          ClassFileLocator.ForClassLoader.WeaklyReferenced.of(loader));
      // A pool of its own: the warm-up must leave no entry in the caches the application's classes use.
      TypeDescription type = new LoadedFallbackPool(new TypePool.CacheProvider.Simple(), locator, loader)
          .describe(name).resolve();
      DynamicType.Builder<?> builder = byteBuddy().redefine(type, locator);
      boolean woven = false;
      for (Entry e : entries) {
        e.matches(type);
        // One instrumentation's advice initialises ByteBuddy's advice path; each other one's advice is read when a
        // class it instruments first loads (a few milliseconds), so libraries the application never loads cost nothing.
        if (!woven) {
          for (AsmVisitorWrapper v : e.visitors()) {
            builder = builder.visit(v);
            woven = true;
          }
        }
      }
      builder.make().getBytes();
    } catch (Throwable t) {
      LOG.debug("warm-up of the class transformation path failed (classes are still instrumented as they load): "
          + AgentLog.describe(t));
    }
  }

  /** Only described and woven by {@link #warmUp}, never loaded. */
  static final class WarmUpTarget {
    @SuppressWarnings("unused")
    public Object execute(String sql) {
      return sql;
    }
  }

  /** Dynamic attach: classes loaded before the agent are retransformed through {@link #transform}. */
  void retransformLoaded(Instrumentation inst) {
    List<Class<?>> targets = new ArrayList<>();
    // Matching initialises ByteBuddy on this thread; classes it loads meanwhile must not be transformed with it.
    TRANSFORMING.set(Boolean.TRUE);
    try {
      collectTargets(inst, targets);
    } finally {
      TRANSFORMING.remove();
    }
    // Class loaders first: a driver's class is only instrumented if its loader already sees the bootstrap part, and
    // the first check of a loader is remembered.
    targets.sort(java.util.Comparator.comparing(c -> !ClassLoader.class.isAssignableFrom(c)));
    for (Class<?> c : targets) {
      try {
        inst.retransformClasses(c);
      } catch (Throwable t) {
        LOG.warn("could not retransform " + c.getName(), t);
      }
    }
  }

  private void collectTargets(Instrumentation inst, List<Class<?>> targets) {
    for (Class<?> c : inst.getAllLoadedClasses()) {
      if (c.getClassLoader() == null || c.isInterface() || c.isArray() || !inst.isModifiableClass(c)
          || c.getName().startsWith("dev.fencing.agent.")) {
        continue;
      }
      try {
        TypeDescription type = TypeDescription.ForLoadedType.of(c);
        for (Entry e : entries) {
          if (e.matches(type)) {
            targets.add(c);
            break;
          }
        }
      } catch (Throwable ignored) {
        // a class whose hierarchy cannot be resolved is not ours to change
      }
    }
  }

  /**
   * Premain: boot classes named by an instrumentation ({@link TypeInstrumentation#bootClassName}) that the JVM loaded
   * before the transformer was registered are retransformed. Matched by name only, so ByteBuddy loads only when
   * there is such a class.
   */
  void retransformEarlyBootClasses(Instrumentation inst) {
    java.util.Set<String> names = new java.util.HashSet<>();
    for (Entry e : entries) {
      if (e.type.bootClassName() != null) {
        names.add(e.type.bootClassName());
      }
    }
    if (names.isEmpty()) {
      return;
    }
    for (Class<?> c : inst.getAllLoadedClasses()) {
      if (c.getClassLoader() == null && names.contains(c.getName()) && inst.isModifiableClass(c)) {
        try {
          inst.retransformClasses(c);
        } catch (Throwable t) {
          LOG.warn("could not retransform " + c.getName(), t);
        }
      }
    }
  }

  /** Naive byte search; markers are short and most class files are a few kilobytes. */
  static boolean contains(byte[] haystack, byte[] needle) {
    byte first = needle[0];
    int last = haystack.length - needle.length;
    outer:
    for (int i = 0; i <= last; i++) {
      if (haystack[i] != first) {
        continue;
      }
      for (int j = 1; j < needle.length; j++) {
        if (haystack[i + j] != needle[j]) {
          continue outer;
        }
      }
      return true;
    }
    return false;
  }

  /**
   * Describes types from their class files, falling back to the loaded class for types that have none. Other agents
   * add interfaces they generate and inject (the OpenTelemetry agent's VirtualFieldAccessor$... on every JDBC
   * Connection and Statement, say): no class file exists for them, so a plain pool fails on our super-type matchers.
   * Only types without a class file reach the fallback, and those are already loaded (so it loads nothing new).
   */
  static final class LoadedFallbackPool extends TypePool.Default.WithLazyResolution {
    /** Weak: descriptions in a loader's type cache refer to the pool that parsed them. Null for the boot loader. */
    private final java.lang.ref.WeakReference<ClassLoader> loader;

    LoadedFallbackPool(TypePool.CacheProvider cache, ClassFileLocator locator, ClassLoader loader) {
      super(cache, locator, TypePool.Default.ReaderMode.FAST);
      this.loader = loader == null ? null : new java.lang.ref.WeakReference<>(loader);
    }

    @Override
    public Resolution describe(String name) {
      Resolution r = super.describe(name);
      if (r.isResolved()) {
        return r;
      }
      try {
        ClassLoader l = loader == null ? null : loader.get();
        if (loader != null && l == null) {
          return r;
        }
        return new Resolution.Simple(TypeDescription.ForLoadedType.of(Class.forName(name, false, l)));
      } catch (Throwable t) {
        return r;
      }
    }
  }
}
