package dev.oam.architecture;

import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The package cycles among imported classes, as strongly connected components of the package graph (Tarjan's
 * algorithm): each component of more than one package is a cycle, reported with one class dependency per edge inside
 * it. A second look beside ArchUnit's slice rule, whose search can miss a cycle when it is given many modules at once
 * (it missed oam-testing's root package and {@code contract} in the whole product, and found them in oam-testing
 * alone).
 */
final class PackageCycles {
    private PackageCycles() {}

    /** Each cycle as its packages, with an example dependency for every edge between two of them. */
    static List<String> find(JavaClasses classes, String prefix) {
        Map<String, Map<String, String>> edges = new TreeMap<>(); // from package -> to package -> an example
        for (JavaClass type : classes) {
            String from = type.getPackageName();
            if (!from.startsWith(prefix)) {
                continue;
            }
            for (Dependency dependency : type.getDirectDependenciesFromSelf()) {
                String to = dependency.getTargetClass().getPackageName();
                if (!to.equals(from) && to.startsWith(prefix)) {
                    edges.computeIfAbsent(from, k -> new TreeMap<>()).putIfAbsent(to, dependency.getDescription());
                }
            }
        }
        List<String> cycles = new ArrayList<>();
        for (Set<String> component : components(edges)) {
            StringBuilder text = new StringBuilder("cycle among " + component + ":");
            for (String from : component) {
                edges.getOrDefault(from, Map.of()).forEach((to, example) -> {
                    if (component.contains(to)) {
                        text.append("\n  ")
                                .append(from)
                                .append(" -> ")
                                .append(to)
                                .append(": ")
                                .append(example);
                    }
                });
            }
            cycles.add(text.toString());
        }
        return cycles;
    }

    private static List<Set<String>> components(Map<String, Map<String, String>> edges) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new TreeSet<>();
        List<Set<String>> found = new ArrayList<>();
        for (String start : edges.keySet()) {
            if (!index.containsKey(start)) {
                connect(start, edges, index, low, stack, onStack, found);
            }
        }
        return found;
    }

    private static void connect(
            String node,
            Map<String, Map<String, String>> edges,
            Map<String, Integer> index,
            Map<String, Integer> low,
            Deque<String> stack,
            Set<String> onStack,
            List<Set<String>> found) {
        index.put(node, index.size());
        low.put(node, index.get(node));
        stack.push(node);
        onStack.add(node);
        for (String next : edges.getOrDefault(node, Map.of()).keySet()) {
            if (!index.containsKey(next)) {
                connect(next, edges, index, low, stack, onStack, found);
                low.put(node, Math.min(low.get(node), low.get(next)));
            } else if (onStack.contains(next)) {
                low.put(node, Math.min(low.get(node), index.get(next)));
            }
        }
        if (low.get(node).equals(index.get(node))) {
            Set<String> component = new TreeSet<>();
            String member;
            do {
                member = stack.pop();
                onStack.remove(member);
                component.add(member);
            } while (!member.equals(node));
            if (component.size() > 1) {
                found.add(component);
            }
        }
    }
}
