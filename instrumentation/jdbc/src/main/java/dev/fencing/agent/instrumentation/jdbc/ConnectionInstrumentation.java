package dev.fencing.agent.instrumentation.jdbc;

import static net.bytebuddy.matcher.ElementMatchers.hasSuperType;
import static net.bytebuddy.matcher.ElementMatchers.isAbstract;
import static net.bytebuddy.matcher.ElementMatchers.isInterface;
import static net.bytebuddy.matcher.ElementMatchers.isPublic;
import static net.bytebuddy.matcher.ElementMatchers.named;
import static net.bytebuddy.matcher.ElementMatchers.namedOneOf;
import static net.bytebuddy.matcher.ElementMatchers.not;
import static net.bytebuddy.matcher.ElementMatchers.takesArgument;
import static net.bytebuddy.matcher.ElementMatchers.takesArguments;

import dev.fencing.agent.instrumentation.api.TypeInstrumentation;
import net.bytebuddy.description.type.TypeDescription;
import net.bytebuddy.matcher.ElementMatcher;

/**
 * java.sql.Connection implementations: remember what each prepared statement is, forget session pairs on rollback,
 * and decide commits (a commit after the lease's deadline must not make unjudged writes visible).
 */
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
  public java.util.Set<String> superTypeNames() {
    return java.util.Set.of("java.sql.Connection");
  }

  @Override
  public void transform(Transformer t) {
    t.applyAdvice(isPublic().and(not(isAbstract())).and(namedOneOf("prepareStatement", "prepareCall"))
        .and(takesArgument(0, String.class)), PrepareAdvice.class);
    t.applyAdvice(isPublic().and(not(isAbstract())).and(named("rollback")), RollbackAdvice.class);
    t.applyAdvice(isPublic().and(not(isAbstract())).and(named("setSchema").or(named("setCatalog")))
        .and(takesArguments(String.class)), SchemaAdvice.class);
    t.applyAdvice(isPublic().and(not(isAbstract())).and(named("commit")).and(takesArguments(0)), CommitAdvice.class);
    t.applyAdvice(isPublic().and(not(isAbstract())).and(named("setAutoCommit")).and(takesArguments(boolean.class)),
        AutoCommitAdvice.class);
  }
}
