package dev.fencing.agent.instrumentation.jdbc;

import static net.bytebuddy.matcher.ElementMatchers.isConstructor;
import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * pgjdbc's {@code CopyManager}: {@code COPY ... FROM STDIN} writes rows without a java.sql.Statement, so the
 * statement hooks never see it. The constructor tells which connection a manager belongs to; {@code copyIn} is then
 * decided like a statement ({@code COPY t FROM} fires t's INSERT triggers, so a fence on t judges it).
 */
final class CopyManagerInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "org/postgresql/copy/CopyManager";
  }

  @Override
  public String className() {
    return "org.postgresql.copy.CopyManager";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return named("org.postgresql.copy.CopyManager");
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(isConstructor().and(takesArguments(1)), CopyManagerCreatedAdvice.class);
    t.applyAdvice(isPublic().and(named("copyIn")).and(takesArgument(0, String.class)), CopyInAdvice.class);
  }
}
