package dev.fencing.agent.instrumentation.curator;

import dev.fencing.agent.bootstrap.LockLibraries;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import net.bytebuddy.asm.Advice;

/**
 * {@code LeaderLatch.setLeadership(newValue)}, through which every gain and loss of the latch's leadership passes
 * (close included, after the latch's state is CLOSED): the bridge sees the change and the latch's node, path and
 * state. Curator types are read as Object (see {@link LockLibraries}).
 */
public final class SetLeadershipAdvice {
  private SetLeadershipAdvice() {}

  @Advice.OnMethodEnter(suppress = Throwable.class)
  public static boolean enter(@Advice.FieldValue("hasLeadership") AtomicBoolean hasLeadership) {
    return hasLeadership.get();
  }

  @Advice.OnMethodExit(suppress = Throwable.class)
  public static void exit(@Advice.Enter boolean was, @Advice.Argument(0) boolean now, @Advice.This Object latch,
      @Advice.FieldValue("client") Object client, @Advice.FieldValue("latchPath") String latchPath,
      @Advice.FieldValue("ourPath") AtomicReference<?> ourPath, @Advice.FieldValue("state") AtomicReference<?> state) {
    LockLibraries.curatorLeadership(latch, client, latchPath, (String) ourPath.get(), was, now,
        String.valueOf(state.get()));
  }
}
