package dev.fencing.agent.bootstrap;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * What the Kafka producer advice does for one record or one failed batch, apart from the kafka-clients calls it
 * makes itself: ask the hook (its failures counted, never the application's error), write the headers a tag carries,
 * the message and cause of the block's KafkaException, and turn a transaction in progress abortable. Static,
 * java.base types only: it is reached from advice inlined into KafkaProducer and RecordAccumulator; the
 * kafka-clients methods it calls (Headers.remove/add, TransactionManager.maybeTransitionToErrorState: public API of
 * 3.x and 4.x) are method handles looked up once per class, lock-free afterwards.
 */
public final class KafkaSend {
  /**
   * The application's send callback, run in the inbound token or lock scope current where {@code send} was called (a
   * declared section, a captured lock): Kafka completes it on the producer's I/O thread, outside that scope, and a
   * callback that writes is the work's own side effect. The callback itself when nothing is current (the JVM-wide
   * lock decides on every thread) or there is none; else a {@link java.lang.reflect.Proxy} of {@code callbackType}
   * (Kafka's {@code Callback}), made only for sends inside a scope.
   */
  public static Object inContext(Object callback, Class<?> callbackType) {
    Object context = TokenContext.carried();
    if (callback == null || context == null || java.lang.reflect.Proxy.isProxyClass(callback.getClass())
        && java.lang.reflect.Proxy.getInvocationHandler(callback) instanceof InContext) {
      return callback;
    }
    try {
      return java.lang.reflect.Proxy.newProxyInstance(callbackType.getClassLoader(), new Class<?>[] {callbackType},
          new InContext(callback, context));
    } catch (RuntimeException | LinkageError e) {
      return callback; // the callback runs outside the scope, as without the agent
    }
  }

  /** Calls the application's callback with the sending thread's context installed. */
  private static final class InContext implements java.lang.reflect.InvocationHandler {
    private final Object target;
    private final Object context;

    InContext(Object target, Object context) {
      this.target = target;
      this.context = context;
    }

    @Override
    public Object invoke(Object proxy, java.lang.reflect.Method method, Object[] args) throws Throwable {
      if (method.getDeclaringClass() == Object.class) {
        switch (method.getName()) {
          case "equals":
            return proxy == args[0];
          case "hashCode":
            return System.identityHashCode(proxy);
          default:
            return target.toString();
        }
      }
      Object previous = TokenContext.install(context);
      try {
        return method.invoke(target, args);
      } catch (java.lang.reflect.InvocationTargetException e) {
        throw e.getCause();
      } finally {
        TokenContext.exit(previous);
      }
    }
  }

  /**
   * The headers a tag replaces: its own two and the older form's three, so that a record the application built from
   * a consumed one (its headers copied) carries one token, in one form.
   */
  private static final String[] REPLACED = {KafkaHook.HEADER, KafkaHook.SIGNATURE_HEADER,
      KafkaHook.LEGACY_TOKEN_HEADER, KafkaHook.LEGACY_LOCK_HEADER, KafkaHook.LEGACY_GRANT_HEADER};

  private static final MethodType TO_ERROR_STATE = MethodType.methodType(void.class, RuntimeException.class);

  /**
   * {@code TransactionManager.maybeTransitionToErrorState(RuntimeException)} per transaction-manager class (public
   * API of kafka-clients 3.x and 4.x), adapted to (Object, RuntimeException); null when the class has none.
   */
  private static final ClassValue<MethodHandle> ERROR_STATE = new ClassValue<>() {
    @Override
    protected MethodHandle computeValue(Class<?> type) {
      try {
        return MethodHandles.publicLookup().findVirtual(type, "maybeTransitionToErrorState", TO_ERROR_STATE)
            .asType(MethodType.methodType(void.class, Object.class, RuntimeException.class));
      } catch (ReflectiveOperationException | RuntimeException e) {
        return null;
      }
    }
  };

  /**
   * Headers.remove(String), Headers.add(String, byte[]) and Headers.toArray() of a record's headers class, or why
   * there are none.
   */
  private record HeaderHandles(MethodHandle remove, MethodHandle add, MethodHandle toArray,
      IllegalStateException failure) {}

  private static final ClassValue<HeaderHandles> HEADER_HANDLES = new ClassValue<>() {
    @Override
    protected HeaderHandles computeValue(Class<?> type) {
      try {
        Class<?> headers = Class.forName("org.apache.kafka.common.header.Headers", false, type.getClassLoader());
        MethodHandles.Lookup l = MethodHandles.publicLookup();
        return new HeaderHandles(l.findVirtual(headers, "remove", MethodType.methodType(headers, String.class))
            .asType(MethodType.methodType(void.class, Object.class, String.class)),
            l.findVirtual(headers, "add", MethodType.methodType(headers, String.class, byte[].class))
                .asType(MethodType.methodType(void.class, Object.class, String.class, byte[].class)),
            l.findVirtual(headers, "toArray", MethodType.methodType(
                Class.forName("[Lorg.apache.kafka.common.header.Header;", false, type.getClassLoader())))
                .asType(MethodType.methodType(Object[].class, Object.class)), null);
      } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
        return new HeaderHandles(null, null, null, new IllegalStateException("cannot tag records: " + type.getName()
            + " has no Headers.remove(String) and add(String, byte[]); records go on untagged", e));
      }
    }
  };

  private KafkaSend() {}

  /**
   * Tags a record through its {@code headers} (kafka-clients' Headers): one {@link KafkaHook#HEADER} with the
   * decision's {@code <token>;<lock>[;<grant>]}, and the signature header when the decision is signed, each exactly
   * once (headers of those names, and of the older form's, already there are removed first). The values are built
   * once per decision; each record gets its own copy, because the application's serializers and interceptors see the
   * array. Throws what the headers throw when they are read-only (IllegalStateException: a record that went through a
   * send before), before anything changed, so the caller can tag a copy instead. A headers class without the methods
   * is a hook failure (counted; the record goes on untagged), never an exception.
   */
  public static void tag(Object headers, Decision d) {
    HeaderHandles h = HEADER_HANDLES.get(headers.getClass());
    byte[] value = d.kafkaValue();
    if (h.failure() != null || value == null) {
      try {
        Fencing.hookFailed(Channel.KAFKA, false, h.failure() != null ? h.failure()
            : new IllegalStateException("cannot tag a record with lock '" + d.lock() + "': not a lock name the "
                + KafkaHook.HEADER + " header carries; the record goes on untagged"));
      } catch (Throwable unreachable) {
        // nothing left to count with
      }
      return;
    }
    try {
      // A record without headers (the usual case: kafka-clients' toArray() of empty headers is a shared empty array)
      // has none of ours to remove; read-only headers then throw at the first add, before anything changed.
      if (((Object[]) h.toArray().invokeExact(headers)).length != 0) {
        for (String name : REPLACED) {
          h.remove().invokeExact(headers, name); // the first throws for read-only headers
        }
      }
      h.add().invokeExact(headers, KafkaHook.HEADER, value.clone());
      byte[] signature = d.kafkaSignature();
      if (signature != null) {
        h.add().invokeExact(headers, KafkaHook.SIGNATURE_HEADER, signature.clone());
      }
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable checked) {
      throw new IllegalStateException(checked); // Headers declares none
    }
  }

  /**
   * The decision for one record sent to {@code topic}, or null when the hook failed: the failure is counted and
   * logged once per interval, and the record goes on untagged. Never throws.
   */
  public static Decision decide(String topic) {
    return decide(topic, null);
  }

  /**
   * {@link #decide(String)} for a record of a transactional producer's transaction in progress ({@code transactions},
   * its TransactionManager; null for a producer that is not transactional).
   */
  public static Decision decide(String topic, Object transactions) {
    try {
      return Fencing.kafka().decide(topic, transactions);
    } catch (Throwable agentError) {
      try {
        Fencing.hookFailed(Channel.KAFKA, false, agentError);
      } catch (Throwable unreachable) {
        // nothing left to count with: the record goes on regardless
      }
      return null;
    }
  }

  /** {@code KafkaProducer.beginTransaction()} of the producer of {@code transactions}. Never throws. */
  public static void transactionBegins(Object transactions) {
    try {
      if (transactions != null) {
        Fencing.kafka().transactionBegins(transactions);
      }
    } catch (Throwable agentError) {
      // what was noted of the previous transaction stays: its commit is judged by grants of this one too (safe side)
    }
  }

  /**
   * {@code KafkaProducer.commitTransaction()} of the producer of {@code transactions}: the block that refuses the
   * commit, or null. A failure of the hook is decided by fencing.fail-mode. Never throws.
   */
  public static Decision committing(Object transactions) {
    if (transactions == null) {
      return null;
    }
    try {
      return Fencing.kafka().committing(transactions);
    } catch (Throwable agentError) {
      try {
        Decision d = Fencing.hookFailed(Channel.KAFKA, true, agentError);
        return d.isBlock() ? d : null;
      } catch (Throwable unreachable) {
        return null;
      }
    }
  }

  /** The message of the KafkaException a blocked record or batch fails with: lock, token and reason. */
  public static String message(Decision d) {
    return d.blockMessage(Channel.KAFKA);
  }

  /** The cause of that KafkaException, for callers that tell the agent's block apart from Kafka's own errors. */
  public static FencingBlockedException cause(Decision d) {
    return new FencingBlockedException(Channel.KAFKA, d);
  }

  /**
   * As KafkaProducer does for its own errors: a transaction in progress on {@code transactions} (the producer's
   * TransactionManager, null for a producer that is not transactional) turns abortable with {@code error}, so its
   * commit fails and its abort works. A no-op outside a transaction; never throws (a transaction already failing, or
   * none in progress on a transactional producer: the record or batch fails regardless).
   */
  public static void abortable(Object transactions, RuntimeException error) {
    if (transactions == null) {
      return;
    }
    MethodHandle toErrorState = ERROR_STATE.get(transactions.getClass());
    if (toErrorState == null) {
      try {
        Fencing.hookFailed(Channel.KAFKA, false, new IllegalStateException(transactions.getClass().getName()
            + " has no maybeTransitionToErrorState(RuntimeException): a blocked record's transaction stays open"));
      } catch (Throwable unreachable) {
        // nothing left to count with
      }
      return;
    }
    try {
      toErrorState.invokeExact(transactions, error);
    } catch (Throwable noTransactionInProgress) {
      // the transaction is already failing, or there is none to abort: the record or batch fails regardless
    }
  }
}
