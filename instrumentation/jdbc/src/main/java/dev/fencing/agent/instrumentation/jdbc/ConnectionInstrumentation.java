package dev.fencing.agent.instrumentation.jdbc;

import static net.bytebuddy.matcher.ElementMatchers.hasSuperType;
import static net.bytebuddy.matcher.ElementMatchers.isAbstract;
import static net.bytebuddy.matcher.ElementMatchers.isInterface;
import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.namedOneOf;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;

import dev.fencing.agent.instrumentation.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/** java.sql.Connection implementations: remember what each prepared statement is, and forget session pairs on rollback. */
final class ConnectionInstrumentation implements TypeInstrumentation {
  @Override
  public String classFileMarker() {
    return "java/sql/";
  }

  @Override
  public ElementMatcher<TypeDescription> typeMatcher() {
    return not(isInterface()).and(hasSuperType(named("java.sql.Connection")));
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(isPublic().and(not(isAbstract())).and(namedOneOf("prepareStatement", "prepareCall"))
        .and(takesArgument(0, String.class)), PrepareAdvice.class);
    t.applyAdvice(isPublic().and(not(isAbstract())).and(named("rollback")), RollbackAdvice.class);
  }
}
