package dev.fencing.agent.instrumentation.fencingapi;

import dev.fencing.agent.log.AgentLog;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * The API's {@code dev.fencing.api.Fencing}: the read advice on {@code current()}, when it is the one the agent knows
 * ({@link ApiContract#isCurrent}); an API without it is told once in the log and stays a no-op.
 */
final class CurrentInstrumentation implements dev.fencing.agent.instrumentation.api.TypeInstrumentation {
  private static final AgentLog LOG = AgentLog.get(CurrentInstrumentation.class);

  @Override
  public String classFileMarker() {
    return "dev/fencing/api/Fencing";
  }

  @Override
  public String className() {
    return ApiContract.FENCING;
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return type -> {
      if (!type.getName().equals(ApiContract.FENCING)) {
        return false;
      }
      if (type.getDeclaredMethods().stream().noneMatch(ApiContract::isCurrent)) {
        LOG.warn("the application's fencing-api (" + ApiContract.FENCING + ") has no current() this agent knows: its"
            + " Fencing.current() stays empty; use a fencing-api of this agent's release");
        return false;
      }
      return true;
    };
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(ApiContract::isCurrent, CurrentAdvice.class);
  }

  @Override
  public String toString() {
    return "fencing-api Fencing.current";
  }
}
