package dev.fencing.agent.instrumentation.kafkaclients;

import dev.fencing.agent.bootstrap.Fencing;
import net.bytebuddy.asm.Advice;

/** Ends the previous record's token on this thread before a new poll (KafkaHook#polled). */
public final class PollAdvice {
  private PollAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static void enter() {
    Fencing.kafka().polled();
  }
}
