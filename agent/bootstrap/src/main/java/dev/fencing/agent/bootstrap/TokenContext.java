package dev.fencing.agent.bootstrap;

import dev.fencing.protocol.TokenGrammar;
import java.util.concurrent.Callable;

/**
 * What a thread's side effects are decided by, when not by the JVM-wide lock: either the (lock, token) an inbound
 * request or record carried (cross-hop propagation, with its signature and grant id when it had them), or the
 * {@link LockScope} of a declared section the thread runs in ({@link Sections}).
 * An inbound token, while set, is carried by the thread's side effects in a JVM that adopts it (one with no lease of
 * its own), so a service's database writes are fenced with the token of the worker that asked for them; a section
 * scope makes the section's lock decide. Set by the inbound hooks (servlet, JDK HttpServer, Kafka consumer) and the
 * section advice, carried into executor tasks by {@link #wrap} (one slot, whichever of the two is current), always
 * restored when the work ends. Inside a section scope an inbound token is never adopted: the section's lock decides.
 * java.base types only.
 */
public final class TokenContext {
  /** Longest lock name accepted (the agent's own lock names are limited the same way). */
  static final int MAX_LOCK_LENGTH = TokenGrammar.MAX_LOCK_LENGTH;

  /**
   * The inbound {@link Decision} or the section {@link LockScope} current on the thread, or a scope the thread
   * inherited from the thread that started it ({@link ScopeEntries.Inherited}, see {@link #now}); null for none. A
   * thread started inside a scope inherits it bounded by that scope's entry; an inbound token is not inherited.
   */
  private static final ThreadLocal<Object> CURRENT = new InheritableThreadLocal<>() {
    @Override
    protected Object childValue(Object parent) {
      return inherit(parent);
    }
  };
  /** The scope entries of threads that entered a scope, for the threads they start ({@link ScopeEntries}). */
  private static final ThreadLocal<ScopeEntries> ENTRIES = new ThreadLocal<>();
  /** {@link #enter} set a context on a thread that had none: {@link #exit} removes it. */
  private static final Object NONE = new Object();
  /**
   * The inbound request whose hook is active on this thread (see {@link #handling}), in a per-thread slot: marking and
   * unmarking a request writes the slot, with no ThreadLocal entry added or removed per request.
   */
  private static final ThreadLocal<Object[]> REQUEST = ThreadLocal.withInitial(() -> new Object[1]);
  /** {@link #enterRequest} marked a request and changed no context. */
  private static final Object MARKED = new Object();

  /** Some thread entered a lock scope once: until then no thread can be in one (a JVM without sections or captures). */
  private static volatile boolean scopesEntered;

  private TokenContext() {}

  /** Whether any thread of this JVM has entered a lock scope yet (one volatile read). */
  public static boolean scopesEntered() {
    return scopesEntered;
  }

  /** The inbound decision (a TAG with the inbound lock and token) current on this thread, or null. */
  public static Decision current() {
    Object c = CURRENT.get();
    return c instanceof Decision ? (Decision) c : null;
  }

  /** The section scope current on this thread (a declared section, or a task handed off from one), or null. */
  public static LockScope scope() {
    Object c = now();
    return c instanceof LockScope ? (LockScope) c : null;
  }

  /**
   * What is current on this thread: an inbound {@link Decision}, a {@link LockScope}, or null. One thread-local read,
   * for the gate that routes a side effect to its lock.
   */
  public static Object carried() {
    return now();
  }

  /**
   * What is current on this thread, an inherited scope resolved: the scope while the entry of the thread that started
   * this one lasts, nothing after (the thread is then outside every scope, for good).
   */
  private static Object now() {
    Object c = CURRENT.get();
    if (c instanceof ScopeEntries.Inherited) {
      LockScope s = ((ScopeEntries.Inherited) c).scopeIfLive();
      if (s == null) {
        CURRENT.set(null);
      }
      return s;
    }
    return c;
  }

  /** What a thread started now inherits from this one ({@code parent}: what is current here). */
  static Object inherit(Object parent) {
    if (parent instanceof LockScope) {
      ScopeEntries e = ENTRIES.get();
      return e == null ? null : e.inherit((LockScope) parent);
    }
    if (parent instanceof ScopeEntries.Inherited) {
      return ((ScopeEntries.Inherited) parent).again();
    }
    return null; // an inbound request's token stays with the request
  }
  /**
   * Makes {@code scope} current on this thread (entry into a declared section or a captured lock), and a database
   * transaction this thread has open join it ({@link JdbcHook#scopeEntered}); returns what {@link #exit} must be given
   * to restore what was current before (an outer scope, an inbound token, or nothing). Allocates nothing.
   */
  public static Object enterScope(LockScope scope) {
    if (!scopesEntered) {
      scopesEntered = true;
    }
    Object previous = install(scope);
    ScopeEntries e = ENTRIES.get();
    if (e == null) {
      e = new ScopeEntries();
      ENTRIES.set(e);
    }
    e.push();
    try {
      Fencing.jdbc().scopeEntered(scope); // a transaction open on this thread joins the scope (a proxy's, around it)
    } catch (Throwable ignored) {
      // the scope is entered; the hook's failure only leaves an open transaction outside it, as without the call
    }
    return previous;
  }

  /**
   * Makes (lock, token) current on this thread when both are well formed (a lock name of letters, digits, '.', '_',
   * '-'; a decimal token in 1..2^63-1); otherwise changes nothing. Returns what {@link #exit} must be given. Allocates
   * one decision per inbound request, not per side effect. Null means nothing changed (advice that could not read the
   * request returns null too).
   */
  public static Object enter(String lock, String token) {
    return enter(lock, token, null);
  }

  /**
   * As {@link #enter(String, String)}, with the inbound signature of (lock, token), carried on unchanged by the work's
   * own side effects (this JVM cannot sign another holder's token; the fences verify it). A signature that is not 43
   * base64url characters is dropped (the downstream fence then sees none). Verification is the fences' job.
   */
  public static Object enter(String lock, String token, String signature) {
    return enter(lock, token, signature, null);
  }

  /**
   * As {@link #enter(String, String, String)}, with the inbound grant id ({@code Fencing-Grant}, {@code fencing-grant}),
   * carried on unchanged so that the downstream fences can tell this grant's token from a replay of it. A grant that is
   * not 1 to 64 visible ASCII characters is dropped (the downstream fence then sees none).
   */
  public static Object enter(String lock, String token, String signature, String grant) {
    long t = parseToken(token);
    if (t <= 0 || !validLock(lock)) {
      return null;
    }
    String s = wellFormedSignature(signature) ? signature : null;
    String g = wellFormedGrant(grant) ? grant : null;
    Object current = now();
    if (current instanceof LockScope) {
      return null; // inside a section the section's lock decides: an inbound token is never adopted there
    }
    Decision previous = (Decision) current;
    if (previous != null && previous.token() == t && previous.lock().equals(lock)
        && (s == null ? previous.signature() == null : s.equals(previous.signature()))
        && (g == null ? previous.grant() == null : g.equals(previous.grant()))) {
      return null; // nested entry for the same request (filter chains, servlet forwarding)
    }
    CURRENT.set(Decision.tag(lock, t, s, g));
    return previous == null ? NONE : previous;
  }

  /**
   * Leaves the scope entered by the matching {@link #enterScope}, restoring what was current before; threads started
   * in that entry are outside every scope from now on.
   */
  public static void exitScope(Object previous) {
    ScopeEntries e = ENTRIES.get();
    if (e != null) {
      e.pop();
    }
    exit(previous);
  }

  /** Restores what was current before the matching {@link #enter}. */
  public static void exit(Object scope) {
    if (scope == null) {
      return;
    }
    if (scope instanceof Decision || scope instanceof LockScope || scope instanceof ScopeEntries.Inherited) {
      CURRENT.set(scope);
    } else {
      // NONE: there was nothing before. Set to null rather than removed, so the next entry on this thread (a section
      // entered in a loop, the next request) writes the existing entry instead of allocating a new one.
      CURRENT.set(null);
    }
  }

  /**
   * True while {@code request}'s hook is active on this thread. The JDK HttpServer runs one exchange through nested
   * filter chains (user filters, then system filters, each filter calling on), so the hook is entered three or more
   * times per exchange; only the outermost entry needs to read the headers (each lookup there allocates).
   */
  public static boolean handling(Object request) {
    return request != null && REQUEST.get()[0] == request;
  }

  /**
   * Marks {@code request} as handled on this thread (see {@link #handling}) and, when (lock, token) is well formed,
   * makes it current as {@link #enter(String, String, String)} does; lock and token are null for an untagged request.
   * Returns what {@link #exitRequest} must be given, never null. Allocates nothing more than {@code enter}, except when
   * another request's hook is active on this thread (rare: a request handled inside another on the same thread).
   */
  public static Object enterRequest(Object request, String lock, String token, String signature) {
    return enterRequest(request, lock, token, signature, null);
  }

  /** As {@link #enterRequest(Object, String, String, String)}, with the inbound grant id (see {@link #enter}). */
  public static Object enterRequest(Object request, String lock, String token, String signature, String grant) {
    Object[] slot = REQUEST.get();
    Object outer = slot[0];
    slot[0] = request;
    Object scope = lock == null || token == null ? null : enter(lock, token, signature, grant);
    if (outer != null) {
      return new OuterRequest(outer, scope);
    }
    return scope == null ? MARKED : scope;
  }

  /** Undoes the matching {@link #enterRequest}; null (a nested entry that did nothing) changes nothing. */
  public static void exitRequest(Object scope) {
    if (scope == null) {
      return;
    }
    Object[] slot = REQUEST.get();
    if (scope instanceof OuterRequest) {
      OuterRequest o = (OuterRequest) scope;
      slot[0] = o.request;
      exit(o.scope);
    } else {
      slot[0] = null;
      exit(scope == MARKED ? null : scope);
    }
  }

  /** What {@link #exitRequest} restores when a request was handled inside another one on the same thread. */
  private static final class OuterRequest {
    final Object request;
    final Object scope;

    OuterRequest(Object request, Object scope) {
      this.request = request;
      this.scope = scope;
    }
  }

  /**
   * The task, carrying this thread's inbound token or section scope into whichever thread runs it; the task itself
   * when none.
   */
  public static Runnable wrap(Runnable task) {
    Object d = now();
    if (d == null || task == null || task instanceof PropagatingRunnable) {
      return task;
    }
    return new PropagatingRunnable(task, d);
  }

  /**
   * As {@link #wrap(Runnable)}, for a task handed to {@code executor}; the task itself when the executor's queue
   * orders tasks by their own type (a {@code PriorityBlockingQueue}, natural order or a comparator that casts to the
   * application's task class) or the task is {@code Comparable}: a wrapper there would make the queue throw
   * ClassCastException. Such a task runs without the inbound token (fenced destinations then refuse its writes as
   * untagged; nothing breaks).
   */
  public static Runnable wrap(Runnable task, Object executor) {
    Object d = now();
    if (d == null || task == null || task instanceof PropagatingRunnable || task instanceof Comparable
        || ordersTasks(executor)) {
      return task;
    }
    return new PropagatingRunnable(task, d);
  }

  /** A ThreadPoolExecutor whose queue is not one of the JDK's FIFO queues (a priority queue, a custom one). */
  private static boolean ordersTasks(Object executor) {
    if (!(executor instanceof java.util.concurrent.ThreadPoolExecutor)
        || executor instanceof java.util.concurrent.ScheduledThreadPoolExecutor) {
      return false; // the scheduled pool wraps every task in its own ScheduledFutureTask before queueing it
    }
    java.util.concurrent.BlockingQueue<Runnable> q = ((java.util.concurrent.ThreadPoolExecutor) executor).getQueue();
    return !(q instanceof java.util.concurrent.LinkedBlockingQueue
        || q instanceof java.util.concurrent.ArrayBlockingQueue
        || q instanceof java.util.concurrent.SynchronousQueue
        || q instanceof java.util.concurrent.LinkedTransferQueue
        || q instanceof java.util.concurrent.LinkedBlockingDeque);
  }

  /** The callable, carrying this thread's inbound token or section scope; the callable itself when none. */
  public static <T> Callable<T> wrap(Callable<T> task) {
    Object d = now();
    if (d == null || task == null || task instanceof PropagatingCallable) {
      return task;
    }
    return new PropagatingCallable<>(task, d);
  }

  /**
   * A periodic task (scheduleAtFixedRate, scheduleWithFixedDelay) scheduled inside a lock scope: every run is the
   * lock's work (a leader's job started from its leadership callback), decided by the lock's state when it runs, so a
   * deposed or expired leader's runs are refused. An inbound token is not carried: a request's token must not outlive
   * the request in a job that runs forever. The task itself otherwise.
   */
  public static Runnable wrapPeriodic(Runnable task) {
    Object d = now();
    if (!(d instanceof LockScope) || task == null || task instanceof PropagatingRunnable) {
      return task;
    }
    return new PropagatingRunnable(task, d);
  }

  /**
   * A pooled thread starts its next task: whatever a previous task left current (a captured lock's scope that task
   * entered and never left, because the lock ended on another thread) is dropped. One thread-local read.
   */
  public static void taskStarting() {
    if (CURRENT.get() != null) {
      CURRENT.set(null);
      ScopeEntries e = ENTRIES.get();
      if (e != null) {
        e.clear();
      }
    }
  }

  /**
   * A stage function of a {@code CompletableFuture} (thenApply, thenCompose, exceptionally): runs in this thread's
   * inbound token or lock scope on whichever thread completes the future (a library's I/O thread); itself when none.
   */
  public static <T, R> java.util.function.Function<T, R> wrap(java.util.function.Function<T, R> fn) {
    Object d = now();
    if (d == null || fn == null || fn instanceof PropagatingFunction) {
      return fn;
    }
    return new PropagatingFunction<>(fn, d);
  }

  /** As {@link #wrap(java.util.function.Function)}, for thenAccept. */
  public static <T> java.util.function.Consumer<T> wrap(java.util.function.Consumer<T> fn) {
    Object d = now();
    if (d == null || fn == null || fn instanceof PropagatingConsumer) {
      return fn;
    }
    return new PropagatingConsumer<>(fn, d);
  }

  /** As {@link #wrap(java.util.function.Function)}, for handle. */
  public static <T, U, R> java.util.function.BiFunction<T, U, R> wrap(java.util.function.BiFunction<T, U, R> fn) {
    Object d = now();
    if (d == null || fn == null || fn instanceof PropagatingBiFunction) {
      return fn;
    }
    return new PropagatingBiFunction<>(fn, d);
  }

  /** As {@link #wrap(java.util.function.Function)}, for whenComplete. */
  public static <T, U> java.util.function.BiConsumer<T, U> wrap(java.util.function.BiConsumer<T, U> fn) {
    Object d = now();
    if (d == null || fn == null || fn instanceof PropagatingBiConsumer) {
      return fn;
    }
    return new PropagatingBiConsumer<>(fn, d);
  }

  /**
   * The function of a two-stage {@code CompletableFuture} form (thenCombine, thenAcceptBoth, runAfterBoth,
   * applyToEither, acceptEither, runAfterEither), whichever of Function, Consumer, Runnable, BiFunction or BiConsumer
   * it is: wrapped as {@link #wrap(java.util.function.Function)} does. Itself when there is nothing to carry, or when
   * it is more than one of those types (a wrapper could not stand for all of them).
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public static Object wrapStageFunction(Object fn) {
    if (fn == null || now() == null) {
      return fn;
    }
    int kinds = (fn instanceof java.util.function.Function ? 1 : 0) + (fn instanceof java.util.function.Consumer ? 1 : 0)
        + (fn instanceof Runnable ? 1 : 0) + (fn instanceof java.util.function.BiFunction ? 1 : 0)
        + (fn instanceof java.util.function.BiConsumer ? 1 : 0);
    if (kinds != 1) {
      return fn;
    }
    if (fn instanceof java.util.function.Function) {
      return wrap((java.util.function.Function) fn);
    } else if (fn instanceof java.util.function.Consumer) {
      return wrap((java.util.function.Consumer) fn);
    } else if (fn instanceof Runnable) {
      return wrap((Runnable) fn);
    } else if (fn instanceof java.util.function.BiFunction) {
      return wrap((java.util.function.BiFunction) fn);
    }
    return wrap((java.util.function.BiConsumer) fn);
  }

  static Object install(Object d) {
    Object previous = CURRENT.get();
    CURRENT.set(d);
    return previous == null ? NONE : previous;
  }

  /** A decimal int64 above 0 with no sign, spaces or leading '+'; -1 for anything else ({@link TokenGrammar}). */
  public static long parseToken(String text) {
    return TokenGrammar.parseToken(text);
  }

  /** 43 characters of base64url: the shape of a signature ({@link TokenGrammar}). */
  static boolean wellFormedSignature(String s) {
    return TokenGrammar.wellFormedSignature(s);
  }

  /** Longest grant id carried (the fences refuse longer ones as malformed). */
  public static final int MAX_GRANT_LENGTH = TokenGrammar.MAX_GRANT_LENGTH;

  /** 1 to 64 visible ASCII characters: the shape of a grant id the fences accept ({@link TokenGrammar}). */
  public static boolean wellFormedGrant(String g) {
    return TokenGrammar.wellFormedGrant(g);
  }

  /** The lock-name rule of fencing.lock: 1..128 of [A-Za-z0-9._-] ({@link TokenGrammar}). */
  public static boolean validLock(String lock) {
    return TokenGrammar.validLock(lock);
  }

  /** A task handed to an executor under an inbound token or a section scope. */
  static final class PropagatingRunnable implements Runnable {
    private final Runnable task;
    private final Object context;

    PropagatingRunnable(Runnable task, Object context) {
      this.task = task;
      this.context = context;
    }

    @Override
    public void run() {
      Object scope = install(context);
      try {
        task.run();
      } finally {
        exit(scope);
      }
    }

    @Override
    public String toString() {
      return task.toString();
    }
  }

  /** A stage function registered under an inbound token or a lock scope. */
  static final class PropagatingFunction<T, R> implements java.util.function.Function<T, R> {
    private final java.util.function.Function<T, R> fn;
    private final Object context;

    PropagatingFunction(java.util.function.Function<T, R> fn, Object context) {
      this.fn = fn;
      this.context = context;
    }

    @Override
    public R apply(T t) {
      Object scope = install(context);
      try {
        return fn.apply(t);
      } finally {
        exit(scope);
      }
    }
  }

  /** A stage consumer registered under an inbound token or a lock scope. */
  static final class PropagatingConsumer<T> implements java.util.function.Consumer<T> {
    private final java.util.function.Consumer<T> fn;
    private final Object context;

    PropagatingConsumer(java.util.function.Consumer<T> fn, Object context) {
      this.fn = fn;
      this.context = context;
    }

    @Override
    public void accept(T t) {
      Object scope = install(context);
      try {
        fn.accept(t);
      } finally {
        exit(scope);
      }
    }
  }

  /** A stage bi-function registered under an inbound token or a lock scope. */
  static final class PropagatingBiFunction<T, U, R> implements java.util.function.BiFunction<T, U, R> {
    private final java.util.function.BiFunction<T, U, R> fn;
    private final Object context;

    PropagatingBiFunction(java.util.function.BiFunction<T, U, R> fn, Object context) {
      this.fn = fn;
      this.context = context;
    }

    @Override
    public R apply(T t, U u) {
      Object scope = install(context);
      try {
        return fn.apply(t, u);
      } finally {
        exit(scope);
      }
    }
  }

  /** A stage bi-consumer registered under an inbound token or a lock scope. */
  static final class PropagatingBiConsumer<T, U> implements java.util.function.BiConsumer<T, U> {
    private final java.util.function.BiConsumer<T, U> fn;
    private final Object context;

    PropagatingBiConsumer(java.util.function.BiConsumer<T, U> fn, Object context) {
      this.fn = fn;
      this.context = context;
    }

    @Override
    public void accept(T t, U u) {
      Object scope = install(context);
      try {
        fn.accept(t, u);
      } finally {
        exit(scope);
      }
    }
  }

  /** A callable handed to an executor under an inbound token or a section scope. */
  static final class PropagatingCallable<T> implements Callable<T> {
    private final Callable<T> task;
    private final Object context;

    PropagatingCallable(Callable<T> task, Object context) {
      this.task = task;
      this.context = context;
    }

    @Override
    public T call() throws Exception {
      Object scope = install(context);
      try {
        return task.call();
      } finally {
        exit(scope);
      }
    }

    @Override
    public String toString() {
      return task.toString();
    }
  }
}
