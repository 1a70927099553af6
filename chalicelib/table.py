"""One DynamoDB table behind a small interface, with an in-memory twin of the same semantics.

Every store (ledger, budgets, conversations, registry, jobs, ...) talks to its table through `Table`:

    table.get(key)                       the item or None (plain values; numbers as Decimal)
    table.put(item, condition=None)      write the whole item (ConditionFailed if `condition` does not hold)
    table.put_new(item)                  write it only if no item has that key (ConditionFailed otherwise)
    table.update_if(key, set=, add=, remove=, condition=)   upsert some attributes; the item after
    table.delete(key, condition=None)    the old item or None
    table.query(partition, prefix=)      one partition's items in sort-key order (all pages)
    table.scan(condition)                every matching item
    table.delete_many(keys)              delete many items (BatchWriteItem; not atomic)
    transact([Put(...), Update(...), Delete(...), Check(...)])   all or nothing, across tables

Conditions are boto3's own condition objects (`attr("n").not_exists() | attr("n").lte(5)`):
`DynamoTable` renders them with boto3's ConditionExpressionBuilder, `InMemoryTable` evaluates them.
The twin follows DynamoDB's rules where stores rely on them: an update creates a missing item, ADD
counts an absent number as 0, a comparison with an absent or differently typed attribute is false,
a transaction is all-or-nothing and may touch an item once. tests/unit/test_table_contract.py runs
the same tests against both (the DynamoDB one on moto), so the twin cannot drift.

DynamoTable gets its client from chalicelib.aws (the process's one boto3 session) unless given one.
"""
from __future__ import annotations

import copy
import random
import threading
import time
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Callable, Iterator, Protocol, Sequence, Union

from . import aws
from .dynamo import from_item, to_item, to_value

if TYPE_CHECKING:
    from boto3.dynamodb.conditions import Attr, ConditionBase

Item = dict[str, Any]
Key = dict[str, Any]


class ConditionFailed(Exception):
    """A write's condition did not hold, so nothing was written. `failed`: the positions (in a
    transaction's list; (0,) for a single write) of the operations whose condition failed."""

    def __init__(self, failed: Sequence[int] = (0,)) -> None:
        super().__init__(f"condition failed on operation(s) {list(failed)}")
        self.failed = tuple(failed)


class TransactionConflict(Exception):
    """DynamoDB cancelled a transaction for a reason other than a condition (most often a concurrent
    write to one of its items). Nothing was written; retrying is safe. The twin never raises it."""


class IncompleteBatch(Exception):
    """A batch write left items unprocessed after its retries (DynamoDB throttling); some items were written."""


def attr(name: str) -> "Attr":
    """A condition attribute (boto3's `Attr`, imported on first use: boto3 costs ~150 ms to import)."""
    from boto3.dynamodb.conditions import Attr

    return Attr(name)


@dataclass(frozen=True)
class Put:
    """Write the whole item, if `condition` holds (on the item now under its key)."""

    table: "Table"
    item: Item
    condition: "ConditionBase | None" = None


@dataclass(frozen=True)
class Update:
    """Upsert attributes: SET `set`, ADD `add` (absent counts as 0), REMOVE `remove`, if `condition` holds."""

    table: "Table"
    key: Key
    set: Item = field(default_factory=dict)
    add: dict[str, Any] = field(default_factory=dict)
    remove: tuple[str, ...] = ()
    condition: "ConditionBase | None" = None


@dataclass(frozen=True)
class Delete:
    """Delete the item, if `condition` holds."""

    table: "Table"
    key: Key
    condition: "ConditionBase | None" = None


@dataclass(frozen=True)
class Check:
    """Write nothing; the transaction fails unless `condition` holds on this item."""

    table: "Table"
    key: Key
    condition: "ConditionBase"


Op = Union[Put, Update, Delete, Check]


class Table(Protocol):
    name: str
    keys: tuple[str, ...]

    def get(self, key: Key, consistent: bool = True) -> Item | None: ...
    def put(self, item: Item, condition: "ConditionBase | None" = None) -> None: ...
    def put_new(self, item: Item) -> None: ...
    def update_if(self, key: Key, set: Item | None = None, add: dict[str, Any] | None = None,
                  remove: Sequence[str] = (), condition: "ConditionBase | None" = None) -> Item: ...
    def delete(self, key: Key, condition: "ConditionBase | None" = None) -> Item | None: ...
    def query(self, partition: Any, prefix: str | None = None, descending: bool = False, limit: int | None = None,
              consistent: bool = False, attributes: Sequence[str] | None = None) -> list[Item]: ...
    def scan(self, condition: "ConditionBase | None" = None) -> Iterator[Item]: ...
    def delete_many(self, keys: Sequence[Key]) -> None: ...


def transact(ops: Sequence[Op]) -> None:
    """Apply every operation or none (ConditionFailed names the ones whose condition failed)."""
    if not ops:
        return
    kinds = {type(op.table) for op in ops}
    if len(kinds) != 1:
        raise ValueError("a transaction cannot mix DynamoDB tables and in-memory twins")
    kinds.pop()._transact(ops)


def key_of(item: Item, keys: Sequence[str]) -> Key:
    return {name: item[name] for name in keys}


def open_table(name_or_table: "str | Table", keys: tuple[str, ...], dynamodb: Any | None = None) -> "Table":
    """A store's table: a given Table (a twin in unit tests) as is, or a table name on DynamoDB."""
    if isinstance(name_or_table, str):
        return DynamoTable(name_or_table, keys, dynamodb)
    return name_or_table


# ---- DynamoDB -------------------------------------------------------------------------------------

class _Request:
    """Placeholders for one request: boto3's builder for conditions, #u/:u for our update clauses."""

    def __init__(self) -> None:
        from boto3.dynamodb.conditions import ConditionExpressionBuilder

        self._builder = ConditionExpressionBuilder()
        self.names: dict[str, str] = {}
        self.values: dict[str, Any] = {}

    def condition(self, condition: "ConditionBase", is_key: bool = False) -> str:
        built = self._builder.build_expression(condition, is_key_condition=is_key)
        self.names.update(built.attribute_name_placeholders)
        self.values.update({k: to_value(v) for k, v in built.attribute_value_placeholders.items()})
        return built.condition_expression

    def name(self, attribute: str) -> str:
        placeholder = f"#u{len(self.names)}"
        self.names[placeholder] = attribute
        return placeholder

    def value(self, value: Any) -> str:
        placeholder = f":u{len(self.values)}"
        self.values[placeholder] = to_value(value)
        return placeholder

    def finish(self, request: dict[str, Any]) -> dict[str, Any]:
        if self.names:
            request["ExpressionAttributeNames"] = self.names
        if self.values:
            request["ExpressionAttributeValues"] = self.values
        return request


def _update_expression(req: _Request, set: Item, add: dict[str, Any], remove: Sequence[str]) -> str:
    clauses = []
    if set:
        clauses.append("SET " + ", ".join(f"{req.name(k)} = {req.value(v)}" for k, v in set.items()))
    if add:
        clauses.append("ADD " + ", ".join(f"{req.name(k)} {req.value(v)}" for k, v in add.items()))
    if remove:
        clauses.append("REMOVE " + ", ".join(req.name(k) for k in remove))
    if not clauses:
        raise ValueError("an update needs at least one of set, add, remove")
    return " ".join(clauses)


def _serialized_key(key: Key) -> dict[str, Any]:
    return {k: to_value(v) for k, v in key.items()}


class DynamoTable:
    def __init__(self, name: str, keys: tuple[str, ...], dynamodb: Any | None = None) -> None:
        self.name = name
        self.keys = keys
        self._dynamodb = dynamodb

    def _client(self) -> Any:
        return self._dynamodb or aws.client("dynamodb")

    def _new_condition(self) -> "ConditionBase":
        return attr(self.keys[0]).not_exists()

    # requests (shared by the single calls and by transact) --------------------------------------
    def _put_request(self, op: Put) -> dict[str, Any]:
        req, request = _Request(), {"TableName": self.name, "Item": to_item(op.item)}
        if op.condition is not None:
            request["ConditionExpression"] = req.condition(op.condition)
        return req.finish(request)

    def _update_request(self, op: Update) -> dict[str, Any]:
        req = _Request()
        request = {"TableName": self.name, "Key": _serialized_key(op.key),
                   "UpdateExpression": _update_expression(req, op.set, op.add, op.remove)}
        if op.condition is not None:
            request["ConditionExpression"] = req.condition(op.condition)
        return req.finish(request)

    def _delete_request(self, op: Delete | Check) -> dict[str, Any]:
        req, request = _Request(), {"TableName": self.name, "Key": _serialized_key(op.key)}
        if op.condition is not None:
            request["ConditionExpression"] = req.condition(op.condition)
        return req.finish(request)

    # single calls ---------------------------------------------------------------------------------
    def get(self, key: Key, consistent: bool = True) -> Item | None:
        item = self._client().get_item(TableName=self.name, Key=_serialized_key(key), ConsistentRead=consistent).get("Item")
        return from_item(item, plain=False) if item else None

    def put(self, item: Item, condition: "ConditionBase | None" = None) -> None:
        with _conditional():
            self._client().put_item(**self._put_request(Put(self, item, condition)))

    def put_new(self, item: Item) -> None:
        self.put(item, self._new_condition())

    def update_if(self, key: Key, set: Item | None = None, add: dict[str, Any] | None = None,
                  remove: Sequence[str] = (), condition: "ConditionBase | None" = None) -> Item:
        request = self._update_request(Update(self, key, set or {}, add or {}, tuple(remove), condition))
        with _conditional():
            answer = self._client().update_item(**request, ReturnValues="ALL_NEW")
        return from_item(answer.get("Attributes", {}), plain=False)

    def delete(self, key: Key, condition: "ConditionBase | None" = None) -> Item | None:
        with _conditional():
            answer = self._client().delete_item(**self._delete_request(Delete(self, key, condition)), ReturnValues="ALL_OLD")
        old = answer.get("Attributes")
        return from_item(old, plain=False) if old else None

    def query(self, partition: Any, prefix: str | None = None, descending: bool = False, limit: int | None = None,
              consistent: bool = False, attributes: Sequence[str] | None = None) -> list[Item]:
        from boto3.dynamodb.conditions import Key as KeyCondition

        req = _Request()
        condition = KeyCondition(self.keys[0]).eq(partition)
        if prefix is not None:
            condition = condition & KeyCondition(self.keys[1]).begins_with(prefix)
        request = req.finish({"TableName": self.name, "KeyConditionExpression": req.condition(condition, is_key=True),
                              "ScanIndexForward": not descending, "ConsistentRead": consistent})
        if limit is not None:
            request["Limit"] = limit
        if attributes:
            request["ProjectionExpression"] = ", ".join(req.name(a) for a in attributes)
            req.finish(request)
        return list(self._pages("query", request, limit))

    def delete_many(self, keys: Sequence[Key], attempts: int = 8, sleep: Callable[[float], None] = time.sleep) -> None:
        """Delete every key (not atomically: BatchWriteItem, 25 at a time, resending what DynamoDB left
        unprocessed under throttling). Raises IncompleteBatch if some remain after `attempts` sends."""
        for start in range(0, len(keys), 25):
            requests = {self.name: [{"DeleteRequest": {"Key": _serialized_key(k)}} for k in keys[start:start + 25]]}
            for attempt in range(attempts):
                if attempt:  # unprocessed items mean throttling: AWS asks for exponential backoff (full jitter, <= 2 s total)
                    sleep(random.uniform(0, min(0.5, 0.025 * 2 ** attempt)))
                requests = self._client().batch_write_item(RequestItems=requests).get("UnprocessedItems") or {}
                if not requests:
                    break
            else:
                raise IncompleteBatch(f"{len(requests.get(self.name, []))} deletes left unprocessed in {self.name}")

    def scan(self, condition: "ConditionBase | None" = None) -> Iterator[Item]:
        req = _Request()
        request: dict[str, Any] = {"TableName": self.name}
        if condition is not None:
            request["FilterExpression"] = req.condition(condition)
        return self._pages("scan", req.finish(request), None)

    def _pages(self, operation: str, request: dict[str, Any], limit: int | None) -> Iterator[Item]:
        call, count = getattr(self._client(), operation), 0
        while True:
            page = call(**request)
            for item in page.get("Items", []):
                yield from_item(item, plain=False)
                count += 1
                if limit is not None and count >= limit:
                    return
            if "LastEvaluatedKey" not in page:
                return
            request = {**request, "ExclusiveStartKey": page["LastEvaluatedKey"]}

    @staticmethod
    def _transact(ops: Sequence[Op]) -> None:
        builders: dict[type, tuple[str, Callable[[Any], dict[str, Any]]]] = {
            Put: ("Put", lambda op: op.table._put_request(op)),
            Update: ("Update", lambda op: op.table._update_request(op)),
            Delete: ("Delete", lambda op: op.table._delete_request(op)),
            Check: ("ConditionCheck", lambda op: op.table._delete_request(op)),
        }
        items = []
        for op in ops:
            name, build = builders[type(op)]
            items.append({name: build(op)})
        with _conditional():
            ops[0].table._client().transact_write_items(TransactItems=items)


class _conditional:
    """DynamoDB's refusals as our exceptions: ConditionFailed, TransactionConflict; anything else as is."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: BaseException | None, tb: Any) -> bool:
        code = aws.error_code(exc) if exc is not None else ""
        if code == "ConditionalCheckFailedException":
            raise ConditionFailed((0,)) from exc
        if code == "TransactionCanceledException":
            reasons = [reason.get("Code") for reason in exc.response.get("CancellationReasons", [])]  # type: ignore[union-attr]
            failed = [i for i, reason in enumerate(reasons) if reason == "ConditionalCheckFailed"]
            if failed:
                raise ConditionFailed(failed) from exc
            raise TransactionConflict(f"transaction cancelled: {reasons}") from exc
        return False


# ---- in memory ------------------------------------------------------------------------------------

# One lock for every twin: a transaction across two twins is atomic, as across two DynamoDB tables.
_memory_lock = threading.RLock()


def _stored(value: Item) -> Item:
    """What DynamoDB would store and give back: floats as Decimal, None values dropped, sets as sets."""
    return from_item(to_item(value), plain=False)


class InMemoryTable:
    """The twin: a dict per table, DynamoDB's semantics for what stores rely on (see the module docstring)."""

    def __init__(self, name: str, keys: tuple[str, ...]) -> None:
        self.name = name
        self.keys = keys
        self._items: dict[tuple[Any, ...], Item] = {}

    def _id(self, key: Key) -> tuple[Any, ...]:
        if set(key) != set(self.keys):
            raise ValueError(f"key {sorted(key)} does not match the table's key {list(self.keys)}")
        return tuple(_stored({"v": key[name]})["v"] for name in self.keys)

    def items(self) -> list[Item]:
        """A copy of every item (for tests)."""
        with _memory_lock:
            return [copy.deepcopy(item) for item in self._items.values()]

    def get(self, key: Key, consistent: bool = True) -> Item | None:
        with _memory_lock:
            found = self._items.get(self._id(key))
            return copy.deepcopy(found) if found is not None else None

    def put(self, item: Item, condition: "ConditionBase | None" = None) -> None:
        self._transact([Put(self, item, condition)])

    def put_new(self, item: Item) -> None:
        self.put(item, attr(self.keys[0]).not_exists())

    def update_if(self, key: Key, set: Item | None = None, add: dict[str, Any] | None = None,
                  remove: Sequence[str] = (), condition: "ConditionBase | None" = None) -> Item:
        with _memory_lock:
            self._transact([Update(self, key, set or {}, add or {}, tuple(remove), condition)])
            return self.get(key) or {}

    def delete(self, key: Key, condition: "ConditionBase | None" = None) -> Item | None:
        with _memory_lock:
            old = self.get(key)
            self._transact([Delete(self, key, condition)])
            return old

    def query(self, partition: Any, prefix: str | None = None, descending: bool = False, limit: int | None = None,
              consistent: bool = False, attributes: Sequence[str] | None = None) -> list[Item]:
        pk = _stored({"v": partition})["v"]
        with _memory_lock:
            found = [copy.deepcopy(item) for item in self._items.values() if item[self.keys[0]] == pk
                     and (prefix is None or str(item[self.keys[1]]).startswith(prefix))]
        if len(self.keys) > 1:
            found.sort(key=lambda item: item[self.keys[1]], reverse=descending)
        if attributes:
            found = [{k: v for k, v in item.items() if k in attributes} for item in found]
        return found[:limit] if limit is not None else found

    def delete_many(self, keys: Sequence[Key]) -> None:
        with _memory_lock:
            for key in keys:
                self._items.pop(self._id(key), None)

    def scan(self, condition: "ConditionBase | None" = None) -> Iterator[Item]:
        with _memory_lock:
            found = [copy.deepcopy(item) for item in self._items.values() if condition is None or holds(condition, item)]
        return iter(found)

    @staticmethod
    def _transact(ops: Sequence[Op]) -> None:
        with _memory_lock:
            targets = [(op.table, op.table._id(op.key if not isinstance(op, Put) else key_of(op.item, op.table.keys)))
                       for op in ops]
            if len({(id(t), i) for t, i in targets}) != len(targets):
                raise ValueError("a transaction cannot include more than one operation on one item")  # as DynamoDB
            failed = [n for n, (op, (t, i)) in enumerate(zip(ops, targets))
                      if op.condition is not None and not holds(op.condition, t._items.get(i, {}))]
            if failed:
                raise ConditionFailed(failed)
            results = [_apply(op, t._items.get(i)) for op, (t, i) in zip(ops, targets)]
            for (t, i), result in zip(targets, results):
                if result is None:
                    t._items.pop(i, None)
                else:
                    t._items[i] = result


def _apply(op: Op, current: Item | None) -> Item | None:
    """The item after `op` (None: no item), computed without touching the table."""
    if isinstance(op, Put):
        return _stored(op.item)
    if isinstance(op, Delete):
        return None
    if isinstance(op, Check):
        return current
    item = copy.deepcopy(current) if current is not None else _stored(op.key)
    item.update(_stored(op.set))
    for name, amount in _stored(op.add).items():
        before = item.get(name, Decimal(0))
        if not isinstance(before, Decimal) or not isinstance(amount, Decimal):
            raise ValueError(f"ADD needs numbers: {name}")  # DynamoDB's ValidationException
        item[name] = before + amount
    for name in op.remove:
        item.pop(name, None)
    return item


# ---- conditions on plain items (the twin's evaluator) ---------------------------------------------

_MISSING = object()


def _resolve(item: Item, operand: Any) -> Any:
    """An operand's value: an attribute path's value in the item (_MISSING if absent), or a literal."""
    from boto3.dynamodb.conditions import AttributeBase

    if not isinstance(operand, AttributeBase):
        return _stored({"v": operand}).get("v", _MISSING)
    value: Any = item
    for part in operand.name.split("."):
        if not isinstance(value, dict) or part not in value:
            return _MISSING
        value = value[part]
    return value


def _comparable(a: Any, b: Any) -> bool:
    """DynamoDB compares numbers with numbers, strings with strings, binary with binary; else false."""
    return a is not _MISSING and b is not _MISSING and (type(a) is type(b) or {type(a), type(b)} <= {bytes, bytearray})


def holds(condition: "ConditionBase", item: Item) -> bool:
    """Whether a boto3 condition holds for a plain item ({} for a missing item), as DynamoDB decides."""
    name = type(condition).__name__
    values = condition.get_expression()["values"]  # public: the operands, nested conditions for And/Or/Not
    if name in ("And", "Or", "Not"):
        results = [holds(part, item) for part in values]
        return all(results) if name == "And" else any(results) if name == "Or" else not results[0]
    check = _CHECKS.get(name)
    if check is None:
        raise NotImplementedError(f"the in-memory table does not evaluate {name} conditions yet")
    return check(*[_resolve(item, v) for v in values])


def _compare(test: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    return lambda a, b: _comparable(a, b) and test(a, b)


_CHECKS: dict[str, Callable[..., bool]] = {
    "Equals": lambda a, b: a is not _MISSING and a == b,
    "NotEquals": lambda a, b: a is _MISSING or a != b,
    "LessThan": _compare(lambda a, b: a < b),
    "LessThanEquals": _compare(lambda a, b: a <= b),
    "GreaterThan": _compare(lambda a, b: a > b),
    "GreaterThanEquals": _compare(lambda a, b: a >= b),
    "Between": lambda a, low, high: _comparable(a, low) and _comparable(a, high) and low <= a <= high,
    "In": lambda a, choices: a is not _MISSING and a in choices,
    "BeginsWith": lambda a, prefix: isinstance(a, str) and isinstance(prefix, str) and a.startswith(prefix),
    "AttributeExists": lambda a: a is not _MISSING,
    "AttributeNotExists": lambda a: a is _MISSING,
}
