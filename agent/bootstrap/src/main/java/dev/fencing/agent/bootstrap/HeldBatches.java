package dev.fencing.agent.bootstrap;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;

/**
 * The producer batches one turn of the producer's I/O thread takes out of its buffer because they must not leave
 * ({@link KafkaHook#buffered}), each with the block decision it fails with: taken under each partition's lock, failed
 * after it is released (callbacks must not run under Kafka's lock), the way the producer fails undrained batches
 * when a transaction aborts. Made only when a batch must be failed: a turn that fails nothing allocates nothing.
 *
 * <p>java.base types only, for advice inlined into RecordAccumulator: the batch's and the accumulator's methods
 * ({@code ProducerBatch.isClosed/abortRecordAppends/isDone/abort}, {@code RecordAccumulator.deallocate}, the
 * {@code KafkaException(String, Throwable)} constructor: public API of kafka-clients 3.x and 4.x) are method handles
 * looked up once per class. This path runs only while some buffered batch may have to be held.
 */
public final class HeldBatches {
  private static final String BATCH = "org.apache.kafka.clients.producer.internals.ProducerBatch";
  private static final MethodType TEST = MethodType.methodType(boolean.class, Object.class);
  private static final MethodType ACT = MethodType.methodType(void.class, Object.class);
  private static final MethodType FAIL = MethodType.methodType(void.class, Object.class, RuntimeException.class);
  private static final MethodType PAIR = MethodType.methodType(void.class, Object.class, Object.class);
  private static final MethodType ERROR = MethodType.methodType(RuntimeException.class, String.class,
      Throwable.class);

  /** ProducerBatch's methods, per batch class. */
  private record Batch(MethodHandle isClosed, MethodHandle abortAppends, MethodHandle isDone, MethodHandle abort) {}

  private static final ClassValue<Batch> BATCHES = new ClassValue<>() {
    @Override
    protected Batch computeValue(Class<?> type) {
      try {
        MethodHandles.Lookup l = MethodHandles.publicLookup();
        MethodType bool = MethodType.methodType(boolean.class);
        MethodType none = MethodType.methodType(void.class);
        return new Batch(l.findVirtual(type, "isClosed", bool).asType(TEST),
            l.findVirtual(type, "abortRecordAppends", none).asType(ACT),
            l.findVirtual(type, "isDone", bool).asType(TEST),
            l.findVirtual(type, "abort", MethodType.methodType(void.class, RuntimeException.class)).asType(FAIL));
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("cannot fail batches of " + type.getName(), e);
      }
    }
  };

  /** RecordAccumulator.deallocate(ProducerBatch), per accumulator class. */
  private static final ClassValue<MethodHandle> DEALLOCATE = new ClassValue<>() {
    @Override
    protected MethodHandle computeValue(Class<?> type) {
      try {
        Class<?> batch = Class.forName(BATCH, false, type.getClassLoader());
        return MethodHandles.publicLookup().findVirtual(type, "deallocate", MethodType.methodType(void.class, batch))
            .asType(PAIR);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("cannot return the memory of failed batches to " + type.getName(), e);
      }
    }
  };

  /** The (String message, Throwable cause) constructor of the exception type batches fail with. */
  private static final ClassValue<MethodHandle> ERRORS = new ClassValue<>() {
    @Override
    protected MethodHandle computeValue(Class<?> type) {
      try {
        return MethodHandles.publicLookup()
            .findConstructor(type, MethodType.methodType(void.class, String.class, Throwable.class)).asType(ERROR);
      } catch (ReflectiveOperationException e) {
        throw new IllegalStateException("cannot make a " + type.getName() + "(String, Throwable)", e);
      }
    }
  };

  private final List<Object> batches = new ArrayList<>();
  private final List<Decision> decisions = new ArrayList<>();

  private HeldBatches() {}

  /**
   * Takes out of {@code deque} (one partition's batches, null for a partition with none), under its lock, the
   * batches never sent that must not leave, oldest first, up to the first that may; their appends are stopped. A
   * closed batch was sent before: Kafka's delivery-timeout sweep fails those. Returns {@code held}, made on the first
   * batch taken.
   */
  public static HeldBatches take(HeldBatches held, Deque<?> deque) throws Throwable {
    if (deque == null) {
      return held;
    }
    KafkaHook hook = Fencing.kafka();
    synchronized (deque) {
      for (Object first = deque.peekFirst(); first != null; first = deque.peekFirst()) {
        Batch b = BATCHES.get(first.getClass());
        if ((boolean) b.isClosed().invokeExact(first)) {
          break;
        }
        Decision d = hook.buffered(first, true);
        if (d == null) {
          break;
        }
        deque.pollFirst();
        b.abortAppends().invokeExact(first);
        if (held == null) {
          held = new HeldBatches();
        }
        held.batches.add(first);
        held.decisions.add(d);
      }
    }
    return held;
  }

  /**
   * Fails every batch taken: callbacks and futures completed with a {@code errorType} (KafkaException) naming lock,
   * token and reason, with a {@link FencingBlockedException} as its cause, a transaction in progress on
   * {@code transactions} turned abortable ({@link KafkaSend#abortable}), the buffer memory returned to
   * {@code accumulator}. Each batch on its own: one completed meanwhile keeps its outcome and the others still fail.
   */
  public void fail(Object accumulator, Object transactions, Class<?> errorType) throws Throwable {
    MethodHandle newError = ERRORS.get(errorType);
    MethodHandle deallocate = DEALLOCATE.get(accumulator.getClass());
    for (int i = 0; i < batches.size(); i++) {
      Object batch = batches.get(i);
      Decision d = decisions.get(i);
      RuntimeException error = (RuntimeException) newError.invokeExact(KafkaSend.message(d),
          (Throwable) KafkaSend.cause(d));
      KafkaSend.abortable(transactions, error);
      Batch b = BATCHES.get(batch.getClass());
      try {
        if (!(boolean) b.isDone().invokeExact(batch)) {
          b.abort().invokeExact(batch, error);
        }
      } catch (RuntimeException alreadyCompleted) {
        // completed meanwhile: its records have their outcome
      } finally {
        deallocate.invokeExact(accumulator, batch);
      }
    }
  }
}
