package dev.fencing.agent.instrumentation.kafkaclients;

import dev.fencing.agent.bootstrap.Fencing;
import net.bytebuddy.asm.Advice;

/**
 * Around {@code RecordAccumulator.expiredBatches(now)}: marks the I/O thread as sweeping the buffer for expired
 * batches, so that {@link DeliveryTimeoutAdvice} expires held batches there and nowhere else (the same question is
 * asked of batches in flight, which the agent never fails).
 */
public final class ExpirySweepAdvice {
  private ExpirySweepAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter() {
    Fencing.kafka().expirySweep(true);
  }

  @Advice.OnMethodExit(onThrowable = Throwable.class, suppress = Throwable.class)
  public static void exit() {
    Fencing.kafka().expirySweep(false);
  }
}
