package dev.fencing.agent.instrumentation.curator;

import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * {@code org.apache.curator.framework.recipes.locks.LockInternals}: {@code attemptLock} returns the path of the lock
 * node it holds (null when it timed out), {@code releaseLock} deletes it. InterProcessMutex (so LeaderSelector) calls
 * them once per acquisition and release, not for re-entrant ones.
 */
final class LockInternalsInstrumentation implements TypeInstrumentation {
  static final String CLASS = "org.apache.curator.framework.recipes.locks.LockInternals";

  @Override
  public String classFileMarker() {
    return "org/apache/curator/framework/recipes/locks/LockInternals";
  }

  @Override
  public String className() {
    return CLASS;
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named(CLASS);
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(named("attemptLock").and(takesArguments(3)), AttemptLockAdvice.class);
    t.applyAdvice(named("releaseLock").and(takesArguments(1)), ReleaseLockAdvice.class);
  }

  @Override
  public String toString() {
    return "Curator LockInternals";
  }
}
