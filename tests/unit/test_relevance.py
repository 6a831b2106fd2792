import math

import pytest

from focuscrawl.core.relevance import Topic, count_phrase, normalize, parse_keywords, tokenize


def test_tokenize_unicode_lowercase_stopwords_plurals():
    assert tokenize("The Café's naïve Übermensch, 2 ways!") == [
        "café", "naïve", "übermensch", "2", "way",
    ]
    assert tokenize("") == []
    assert tokenize("snake_case parse_args") == ["snake", "case", "parse", "arg"]


def test_normalize_folds_common_plurals_only():
    assert normalize("transactions") == "transaction"
    assert normalize("queries") == "query"
    assert normalize("boxes") == "box"
    assert normalize("class") == "class"
    assert normalize("status") == "status"
    assert normalize("analysis") == "analysis"
    assert normalize("gas") == "gas"  # too short to touch


def test_parse_keywords_words_phrases_and_quotes():
    assert parse_keywords("garbage collection tracing") == [
        "garbage", "collection", "tracing",
    ]
    assert parse_keywords("garbage collection, GIL") == ["garbage collection", "GIL"]
    assert parse_keywords('"memory leak" profiler') == ["memory leak", "profiler"]
    assert parse_keywords("the, of, regex") == ["regex"]  # stop-word-only keywords vanish
    assert parse_keywords('unbalanced "quote') == ["unbalanced", "quote"]


def test_cosine_hand_computed():
    topic = Topic("regex pattern")
    # topic vector: pattern=1, regex=1; page: regex=2, match=1
    # dot = 2, |q| = sqrt(2), |p| = sqrt(5)  ->  2 / sqrt(10)
    assert topic.cosine(tokenize("regex regex match")) == pytest.approx(2 / math.sqrt(10))
    assert topic.cosine(tokenize("regex pattern")) == pytest.approx(1.0)
    assert topic.cosine(tokenize("cooking recipes")) == 0.0
    assert topic.cosine([]) == 0.0


def test_cosine_with_idf_hand_computed():
    topic = Topic("regex", use_idf=True)
    topic.score_page("", "regex common")  # documents=1, df(regex)=1, df(common)=1
    topic.score_page("", "common words")  # documents=2, df(common)=2, df(word)=1
    # idf(t) = ln((1+N)/(1+df)) + 1 with N=2: regex 1+ln(3/2), common 1+ln(1)=1
    idf_regex = 1 + math.log(3 / 2)
    page = tokenize("regex common")
    expected = idf_regex / (1 * math.sqrt(idf_regex**2 + 1.0**2)) * 1  # q = [idf_regex]
    # cosine = (idf_regex * idf_regex) / (idf_regex * sqrt(idf_regex^2 + 1))
    assert topic.cosine(page) == pytest.approx(expected)


def test_hotness_threshold_boundary():
    topic = Topic("computer", hot_body_count=10)
    nine = " ".join(["computer"] * 9 + ["filler"] * 20)
    ten = " ".join(["computer"] * 10 + ["filler"] * 20)
    assert not topic.score_page("Home", nine).hot
    assert topic.score_page("Home", ten).hot
    assert topic.score_page("Computer science", "nothing here").hot  # keyword in the title
    assert Topic("computer", hot_body_count=9).score_page("Home", nine).hot


def test_phrases_match_as_consecutive_words():
    topic = Topic("garbage collection, GIL")
    assert topic.keywords == ["garbage collection", "GIL"]
    assert topic.mentions("Garbage Collection tuning")
    assert topic.mentions("/docs/gil-intro.html")
    assert not topic.mentions("the garbage truck and collection days")
    assert topic.score_page("Collection of garbage", "").hot is False
    assert topic.score_page("Garbage collection", "").hot is True
    # a phrase occurring 10 times makes the page hot; its words scattered do not
    assert topic.score_page("", "garbage collection " * 10).hot
    assert not topic.score_page("", "garbage x collection " * 10).hot
    assert count_phrase(tokenize("a b a b a"), ["a"]) == 0  # "a" is a stop word: tokens empty


def test_topic_requires_keywords():
    with pytest.raises(ValueError):
        Topic("the and of")
